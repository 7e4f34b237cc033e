/* tensor_cuda.cu — the GPU unit of tensor.h: the CUDA backend table, a caching
 * allocator, cuBLAS matmul, cuDNN convolution, batch norm and pooling.
 *
 * Build: `make cuda` (nvcc, CUDA_ARCH, CUDA_HOME overridable). Link this object into a
 * program whose tensor.h implementation is compiled with TENSOR_CUDA; the header then
 * calls tn_cuda_unit_get() once, which probes the GPU and registers the backend.
 *
 * CONTENTS
 *    1. errors, probing the device
 *    2. caching allocator
 *    3. strided geometry (the GPU side of the strided iterator)
 *    4. conversions and elementwise kernels (copy, fill, unary, binary, ternary)
 *    5. reductions, lane ops, layer norm, cross-entropy, fused attention
 *    6. indexing, nonzero
 *    7. matmul (cuBLAS); linear algebra (cuSOLVER)
 *    8. random, sliding windows, pooling, optimizer steps
 *    9. cuDNN: convolution, batch norm, pooling
 *   9b. FFT (cuFFT)
 *   9c. CUDA graphs: the capture of a graph replay (on a stream of its own)
 *   9d. NCCL (torch.distributed's nccl backend)
 *   10. the backend table and the unit
 *
 * Every kernel runs on the legacy default stream (cu_stream(): except inside a CUDA-graph
 * capture, section 9c), so work is ordered as issued and a freed block can be reused at
 * once. Scalar math shared with the CPU (activations, Philox, optimizer rules) comes from
 * tensor.h's TN_HD functions.
 */
#include "tensor.h"
/* Kernels take shapes and strides by value (Geo<N>, the index kernel's geometry: (2 +
   TN_MAX_DIMS) x TN_MAX_DIMS strides): up to 16 dims they stay under CUDA's classic 4 KB
   kernel-parameter limit. Larger limits are CPU-only until the geometry moves to memory. */
#if TN_MAX_DIMS > 16
#error "tensor_cuda.cu supports TN_MAX_DIMS up to 16 (kernel parameters hold the shapes and strides)"
#endif

#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cublasLt.h>
#include <cusolverDn.h>
#include <cufft.h>
#ifndef TN_NO_CUDNN
#include <cudnn.h>
#endif

#include <stdio.h>
#include <string.h>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

/* ======================================================================= */
/* 1. errors, probing the device                                            */
/* ======================================================================= */
static int cu_fail(const char *what, cudaError_t e) {
    (void)cudaGetLastError(); /* clear a sticky launch error so the next call starts clean */
    return tn_error("%s: CUDA error %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}
#define CU_CHECK(what, call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return cu_fail(what, e_); } while (0)
/* after a launch: configuration errors are synchronous; faults inside surface later */
#define CU_LAUNCHED(what) CU_CHECK(what, cudaGetLastError())
/* The stream this thread queues the unit's kernels and library calls on: the legacy default
   stream (0), except while the thread captures a CUDA graph (section 9c): then the capture's
   stream, and an allocation fails (its memory would be another's after the capture). */
static thread_local cudaStream_t cu_cur_stream = 0;
static thread_local bool cu_capturing, cu_capture_allocated;
static thread_local const int64_t *cu_cap_rng;   /* an eager capture's {seed, offset} on the device (graph_pool's RNG, section 9c), or NULL */
static inline cudaStream_t cu_stream(void) { return cu_cur_stream; }
/* An entry a capture cannot hold refuses inside one and spoils it (graph_end fails), as the
   stand-in's TN__SI_NO_CAPTURE: cuSOLVER and NCCL run on the legacy stream (uncaptured: run
   at once, on inputs the capture has not computed yet), a host round trip synchronises; in a
   replay's capture (tn_graph_run, no pool) also a random draw (no device-resident counters:
   a replay would repeat its numbers) and an index check (no slot of a graph's). */
static thread_local const char *cu_capture_refused;   /* what spoiled this thread's capture, or NULL */
static int cu_uncapturable(const char *what) {
    if (!cu_capture_refused) cu_capture_refused = what;
    return tn_error("CUDA graphs: %s while capturing a CUDA graph (operation not permitted when stream is capturing): do it before the capture "
                    "or after it", what);
}
#define CU_NO_CAPTURE(what) do { if (cu_capturing) return cu_uncapturable(what); } while (0)

static const int kThreads = 256;
static unsigned blocks_for(int64_t n) {
    int64_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 32 ? 65535 * 32 : b); /* grid-stride loops cover the rest */
}
#define GRID_LOOP(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* ======================================================================= */
/* 2. caching allocator                                                     */
/* ======================================================================= */
/* PyTorch's scheme, simplified: requests round up to 512 bytes; those up to 1 MiB come
   from 2 MiB segments (small pool), larger ones from segments rounded to 2 MiB (large
   pool). A free block is found best-fit in its pool and split when the rest is worth
   keeping; a freed block merges with free neighbours of its segment. cudaFree happens
   only in empty_cache, or when cudaMalloc fails (then the cache is emptied and the
   allocation retried once).
   A CUDA-graph capture's private pool (PyTorch's): while a thread captures into a Pool, its
   allocations come from the Pool's segments (new ones by cudaMalloc under the relaxed
   capture mode, as PyTorch's CUDAStreamCaptureModeGuard), a block of it freed (inside the
   capture: reused by the capture's later allocations, in stream order; after it) goes back
   to that Pool only, so the graph's addresses stay its own. When the last reference goes
   (graphs freed, handles dropped) its whole free segments are given back (cudaFree) and the
   segments still holding tensors' blocks join the ordinary cache. */
namespace {
struct Pool;
struct Block {
    char *ptr;
    size_t size;
    bool small, used;
    Block *prev, *next; /* neighbours within the segment */
    Pool *pool;         /* a capture's private pool, or NULL: the ordinary cache */
};
struct BlockLess {
    bool operator()(const Block *a, const Block *b) const { return a->size != b->size ? a->size < b->size : a->ptr < b->ptr; }
};
struct Pool {
    int refs = 1;
    std::set<Block *, BlockLess> free_small, free_large;
    std::vector<Block *> segs;   /* each segment's first block (it never merges away) */
};
struct Allocator {
    std::mutex mu;
    std::set<Block *, BlockLess> free_small, free_large;
    std::unordered_map<char *, Block *> live;
    tn_cuda_stats st;
    Allocator() { memset(&st, 0, sizeof st); }

    static size_t round(size_t n) { return n < 512 ? 512 : (n + 511) / 512 * 512; }
    std::set<Block *, BlockLess> &pool(bool small, Pool *P = NULL) {
        if (P) return small ? P->free_small : P->free_large;
        return small ? free_small : free_large;
    }

    Block *find(size_t n, bool small, Pool *P) {
        Block key;
        key.ptr = NULL;
        key.size = n;
        auto &p = pool(small, P);
        auto it = p.lower_bound(&key);
        if (it == p.end()) return NULL;
        Block *b = *it;
        p.erase(it);
        return b;
    }
    /* whole free segments back to the driver */
    void release_cached() {
        for (int s = 0; s < 2; s++) {
            auto &p = pool(s == 0);
            for (auto it = p.begin(); it != p.end();) {
                Block *b = *it;
                if (!b->prev && !b->next) {
                    cudaFree(b->ptr);
                    st.reserved -= b->size;
                    delete b;
                    it = p.erase(it);
                } else ++it;
            }
        }
    }
    /* P: the capture's pool (the caller's thread is capturing into it), or NULL */
    void *alloc(size_t nbytes, Pool *P = NULL) {
        std::lock_guard<std::mutex> lock(mu);
        size_t n = round(nbytes);
        bool small = n <= ((size_t)1 << 20);
        st.num_allocs++;
        Block *b = find(n, small, P);
        if (b) st.num_cache_hits++;
        else {
            size_t seg = small ? ((size_t)2 << 20) : (n + ((size_t)2 << 20) - 1) / ((size_t)2 << 20) * ((size_t)2 << 20);
            void *p = NULL;
            cudaError_t e;
            if (P) {   /* inside a capture: cudaMalloc is allowed in the relaxed mode only; no retry (no cudaFree inside a capture) */
                cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
                cudaThreadExchangeStreamCaptureMode(&mode);
                e = cudaMalloc(&p, seg);
                cudaThreadExchangeStreamCaptureMode(&mode);
            } else e = cudaMalloc(&p, seg);
            if (e != cudaSuccess && !P) { /* free the cache, retry once */
                (void)cudaGetLastError();
                release_cached();
                e = cudaMalloc(&p, seg);
            }
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                st.num_ooms++;
                size_t fr = 0, tot = 0;
                cudaMemGetInfo(&fr, &tot);
                tn_error("CUDA out of memory: tried to allocate %zu bytes; %zu bytes allocated by tensors, %zu reserved "
                         "by the cache, %zu of %zu free on the device", n, st.allocated, st.reserved, fr, tot);
                return NULL;
            }
            st.num_cuda_mallocs++;
            st.reserved += seg;
            if (st.reserved > st.peak_reserved) st.peak_reserved = st.reserved;
            b = new Block();
            b->ptr = (char *)p;
            b->size = seg;
            b->small = small;
            b->prev = b->next = NULL;
            b->pool = P;
            if (P) P->segs.push_back(b);
        }
        size_t rest = b->size - n;
        if (rest >= (small ? 512 : ((size_t)1 << 20))) { /* split: the tail stays free */
            Block *t = new Block();
            t->ptr = b->ptr + n;
            t->size = rest;
            t->small = small;
            t->used = false;
            t->pool = b->pool;
            t->prev = b;
            t->next = b->next;
            if (b->next) b->next->prev = t;
            b->next = t;
            b->size = n;
            pool(small, b->pool).insert(t);
        }
        b->used = true;
        live[b->ptr] = b;
        st.allocated += b->size;
        if (st.allocated > st.peak_allocated) st.peak_allocated = st.allocated;
        return b->ptr;
    }
    /* a takes over its right neighbour b in the segment */
    static void absorb(Block *a, Block *b) {
        a->size += b->size;
        a->next = b->next;
        if (b->next) b->next->prev = a;
        delete b;
    }
    void free(void *ptr) {
        if (!ptr) return;
        std::lock_guard<std::mutex> lock(mu);
        auto it = live.find((char *)ptr);
        if (it == live.end()) return; /* not ours: nothing sane to do */
        Block *b = it->second;
        live.erase(it);
        st.allocated -= b->size;
        b->used = false;
        auto &p = pool(b->small, b->pool);
        if (b->prev && !b->prev->used) { /* merge with the free block before */
            Block *a = b->prev;
            p.erase(a);
            absorb(a, b);
            b = a;
        }
        if (b->next && !b->next->used) { /* and the one after */
            p.erase(b->next);
            absorb(b, b->next);
        }
        p.insert(b);
    }
    void retain(Pool *P) {
        std::lock_guard<std::mutex> lock(mu);
        P->refs++;
    }
    /* one reference less; at none: whole free segments to the driver, the rest to the ordinary cache */
    void release(Pool *P) {
        std::lock_guard<std::mutex> lock(mu);
        if (--P->refs > 0) return;
        const bool can_free = !cu_capturing;   /* cudaFree is not permitted while this thread captures (a graph freed inside another's capture): then the cache keeps it */
        for (Block *h : P->segs) {
            if (can_free && !h->used && !h->next) {
                pool(h->small, P).erase(h);
                cudaFree(h->ptr);   /* synchronises: launches of the graph still queued finish first */
                st.reserved -= h->size;
                delete h;
                continue;
            }
            for (Block *b = h; b; b = b->next) {
                if (!b->used) {
                    pool(b->small, P).erase(b);
                    pool(b->small).insert(b);
                }
                b->pool = NULL;
            }
        }
        delete P;
    }
};
Allocator &allocator() {
    static Allocator *a = new Allocator(); /* never destroyed: tensors may die after main */
    return *a;
}
} // namespace

static thread_local Pool *cu_cap_pool;   /* the pool of this thread's capture (section 9c), or NULL */
static void *cu_alloc(size_t nbytes) {
    if (cu_capturing && cu_cap_pool) return allocator().alloc(nbytes, cu_cap_pool);
    if (cu_capturing) {   /* a replay's capture (no pool): it fails (section 9c); no CUDA call is made inside it */
        cu_capture_allocated = true;
        tn_error("CUDA graphs: an allocation of %zu bytes inside a capture", nbytes);
        return NULL;
    }
    return allocator().alloc(nbytes);
}
static void cu_free(void *ptr, size_t nbytes) { (void)nbytes; allocator().free(ptr); }

/* Scratch memory for one backend call, freed at scope exit. */
struct Scratch {
    std::vector<void *> ptrs;
    void *get(size_t n) {
        void *p = cu_alloc(n ? n : 1);
        if (p) ptrs.push_back(p);
        return p;
    }
    ~Scratch() { for (void *p : ptrs) cu_free(p, 0); }
};
/* The segment (one cudaMalloc) holding ptr, a byte of a live block: its base and size, for
   CUDA IPC (section 9e: a handle names a segment's base, as PyTorch's). false: not ours. */
static bool cu_segment_of(const void *ptr, char **base, size_t *size) {
    Allocator &a = allocator();
    std::lock_guard<std::mutex> lock(a.mu);
    const char *p = (const char *)ptr;
    auto it = a.live.find((char *)p);
    Block *b = it != a.live.end() ? it->second : NULL;
    for (auto &kv : a.live)   /* inside a block (a storage served from an arena): the rare case */
        if (!b && p >= kv.second->ptr && p < kv.second->ptr + kv.second->size) b = kv.second;
    if (!b) return false;
    while (b->prev) b = b->prev;
    *base = b->ptr;
    *size = 0;
    for (; b; b = b->next) *size += b->size;
    return true;
}

/* ======================================================================= */
/* 3. strided geometry                                                      */
/* ======================================================================= */
/* N operands walked over one shape: element i (row-major) of the shape sits at
   base_k + off_k(i) elements. The host merges dims that are contiguous in every operand
   and drops size-1 dims, so most calls run with nd <= 2. */
template <int N> struct Geo {
    int nd;
    bool contig;                  /* every operand contiguous (or a broadcast scalar): off = i or 0 */
    bool narrow;                  /* fewer than 2^31 elements: the index splits by 32-bit division */
    bool scalar[N];               /* operand k is one element broadcast everywhere */
    bool host[N];                 /* operand k is a 0-d CPU tensor: its bits travel in hbits[k] */
    uint64_t hbits[N][2];         /* 16 bytes: a complex128 scalar */
    int64_t shape[TN_MAX_DIMS];
    int64_t st[N][TN_MAX_DIMS];
};

/* Operand t's strides aligned to an output of shape[ndim]: right-aligned, 0 where t
   broadcasts (the CPU's iterator does the same in tn__iter_add). */
struct Aligned { int64_t st[TN_MAX_DIMS]; };
static Aligned align_to(const tn_tensor *t, int ndim) {
    Aligned a;
    int off = ndim - t->ndim;
    for (int d = 0; d < ndim; d++) a.st[d] = d < off || t->shape[d - off] == 1 ? 0 : t->strides[d - off];
    return a;
}
/* Record the 0-d CPU operands (the header lets a CPU scalar join GPU tensors): their value
   rides in the kernel's parameters. Anything else off the device is refused. */
template <int N> static int mark_host(Geo<N> &g, tn_tensor *const *ops, const char *fn) {
    for (int k = 0; k < N; k++) {
        g.host[k] = false;
        g.hbits[k][0] = g.hbits[k][1] = 0;
        if (!ops[k] || ops[k]->device == TN_CUDA) continue;
        if (k == 0) return tn_error("%s: the result is on %s, not on the GPU", fn, tn_device_name(ops[k]->device));
        if (tn_numel(ops[k]) != 1) return tn_error("%s: expected all tensors on the same device, got a %s tensor of shape with %lld elements", fn,
                                                   tn_device_name(ops[k]->device), (long long)tn_numel(ops[k]));
        g.host[k] = true;
        memcpy(&g.hbits[k], tn_data_ptr(ops[k]), tn_dtype_size(ops[k]->dtype));
    }
    return 0;
}
/* Operand k's element at off: from memory, or the host scalar's bits. */
template <class T, int N> __device__ __forceinline__ T ld(const Geo<N> &g, int k, const T *p, int64_t off) {
    if (g.host[k]) { T v; memcpy(&v, &g.hbits[k], sizeof(T)); return v; }
    return p[off];
}
static const void *dev_ptr(const tn_tensor *t) { return t->device == TN_CUDA ? tn_data_ptr(t) : NULL; }

template <int N> static Geo<N> make_geo(const int64_t *shape, int ndim, const int64_t *const *strides) {
    Geo<N> g;
    memset(&g, 0, sizeof g);
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        if (nd > 0) { /* merge into the previous dim when contiguous across it in every operand */
            bool ok = true;
            for (int k = 0; k < N; k++) ok = ok && g.st[k][nd - 1] == strides[k][d] * shape[d];
            if (ok) {
                g.shape[nd - 1] *= shape[d];
                for (int k = 0; k < N; k++) g.st[k][nd - 1] = strides[k][d];
                continue;
            }
        }
        g.shape[nd] = shape[d];
        for (int k = 0; k < N; k++) g.st[k][nd] = strides[k][d];
        nd++;
    }
    g.nd = nd;
    g.contig = nd <= 1;
    int64_t n = 1;
    for (int d = 0; d < nd && n <= INT32_MAX; d++) n *= g.shape[d];
    g.narrow = n <= INT32_MAX;
    for (int k = 0; k < N; k++) {
        g.scalar[k] = true;
        for (int d = 0; d < nd; d++) g.scalar[k] = g.scalar[k] && g.st[k][d] == 0;
        if (nd == 1 && g.st[k][0] != 1 && !g.scalar[k]) g.contig = false;
    }
    if (nd == 0) g.contig = true;
    return g;
}

template <int N> __device__ __forceinline__ void offsets(const Geo<N> &g, int64_t i, int64_t *off) {
    if (g.contig) {
        for (int k = 0; k < N; k++) off[k] = g.scalar[k] ? 0 : i;
        return;
    }
    for (int k = 0; k < N; k++) off[k] = 0;
    if (g.narrow) {   /* 64-bit division is a long software sequence on the GPU; 32-bit is a few instructions */
        uint32_t j = (uint32_t)i;
        for (int d = g.nd - 1; d >= 0; d--) {
            const uint32_t s = (uint32_t)g.shape[d], q = j / s, r = j - q * s;
            j = q;
            for (int k = 0; k < N; k++) off[k] += (int64_t)r * g.st[k][d];
        }
        return;
    }
    for (int d = g.nd - 1; d >= 0; d--) {
        int64_t s = g.shape[d], q = i / s, r = i - q * s;
        i = q;
        for (int k = 0; k < N; k++) off[k] += r * g.st[k][d];
    }
}

static char *base_of(const tn_tensor *t) { return (char *)tn_data_ptr(t); }

/* ======================================================================= */
/* 4. conversions and elementwise kernels                                   */
/* ======================================================================= */
/* The CPU's conversion rules: float -> integer gives x86's "integer indefinite" out of
   range (and uint8 wraps through int64); integers wrap; bool is != 0. */
__host__ __device__ __forceinline__ int64_t f2i64(double v) {
    return (v != v || v >= 9.2233720368547758e18 || v < -9.2233720368547758e18) ? INT64_MIN : (int64_t)v;
}
template <class TO> struct Cvt;
template <> struct Cvt<float> {
    __host__ __device__ static float f(double v) { return (float)v; }
    __host__ __device__ static float i(int64_t v) { return (float)v; }
};
template <> struct Cvt<double> {
    __host__ __device__ static double f(double v) { return v; }
    __host__ __device__ static double i(int64_t v) { return (double)v; }
};
template <> struct Cvt<int32_t> {
    __host__ __device__ static int32_t f(double v) { return (v != v || v >= 2147483648.0 || v <= -2147483649.0) ? INT32_MIN : (int32_t)v; }
    __host__ __device__ static int32_t i(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
};
template <> struct Cvt<int64_t> {
    __host__ __device__ static int64_t f(double v) { return f2i64(v); }
    __host__ __device__ static int64_t i(int64_t v) { return v; }
};
template <> struct Cvt<uint8_t> {
    __host__ __device__ static uint8_t f(double v) { return (uint8_t)(uint64_t)f2i64(v); }
    __host__ __device__ static uint8_t i(int64_t v) { return (uint8_t)(uint64_t)v; }
};
template <> struct Cvt<bool> {
    __host__ __device__ static bool f(double v) { return v != 0; }
    __host__ __device__ static bool i(int64_t v) { return v != 0; }
};
/* float16 and bfloat16 as storage only (copies and fills; cuBLAS reads them in matmul):
   their conversions are tensor.h's integer ones, bit for bit the CPU's (core/half.c):
   through float32, round to nearest even, NaN kept (float16 0x7E00 with the sign;
   bfloat16 0xFFFF from float32 and 0x7FC0 from anything else, as PyTorch). */
struct h16 { uint16_t b; };
struct bf16 { uint16_t b; };
__host__ __device__ __forceinline__ uint32_t f32_bits(float f) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t w;
    memcpy(&w, &f, 4);
    return w;
#endif
}
__host__ __device__ __forceinline__ float bits_f32(uint32_t w) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(w);
#else
    float f;
    memcpy(&f, &w, 4);
    return f;
#endif
}
__host__ __device__ __forceinline__ h16 to_h16(float v) { h16 r; r.b = tn__hd_f32_to_f16(f32_bits(v)); return r; }
__host__ __device__ __forceinline__ bf16 to_bf16(float v, bool from_f32) {
    bf16 r;
    r.b = v != v && !from_f32 ? (uint16_t)0x7FC0 : tn__hd_f32_to_bf16(f32_bits(v));
    return r;
}
__host__ __device__ __forceinline__ float h16_f(h16 h) { return bits_f32(tn__hd_f16_to_f32(h.b)); }
__host__ __device__ __forceinline__ float bf16_f(bf16 h) { return bits_f32(tn__hd_bf16_to_f32(h.b)); }
template <> struct Cvt<h16> {
    __host__ __device__ static h16 f(double v) { return to_h16((float)v); }
    __host__ __device__ static h16 i(int64_t v) { return to_h16((float)v); }
};
template <> struct Cvt<bf16> {
    __host__ __device__ static bf16 f(double v) { return to_bf16((float)v, false); }
    __host__ __device__ static bf16 i(int64_t v) { return to_bf16((float)v, false); }
};
template <class T> struct IsFloat { static const bool v = false; };
template <> struct IsFloat<float> { static const bool v = true; };
template <> struct IsFloat<double> { static const bool v = true; };
/* element conversions: floats through double, integers through int64, half through float */
template <class TO, class TI> struct Conv {
    __device__ static TO c(TI x) { return IsFloat<TI>::v ? Cvt<TO>::f((double)x) : Cvt<TO>::i((int64_t)x); }
};
template <class TO> struct Conv<TO, h16> { __device__ static TO c(h16 x) { return Cvt<TO>::f((double)h16_f(x)); } };
template <class TO> struct Conv<TO, bf16> { __device__ static TO c(bf16 x) { return Cvt<TO>::f((double)bf16_f(x)); } };
template <> struct Conv<h16, h16> { __device__ static h16 c(h16 x) { return x; } };        /* same dtype: the bits */
template <> struct Conv<bf16, bf16> { __device__ static bf16 c(bf16 x) { return x; } };
template <> struct Conv<bf16, float> { __device__ static bf16 c(float x) { return to_bf16(x, true); } };
template <> struct Conv<float, bf16> { __device__ static float c(bf16 x) { return bf16_f(x); } };   /* exact: no trip through double */
template <> struct Conv<float, h16> { __device__ static float c(h16 x) { return h16_f(x); } };
/* complex64 / complex128: (re, im) pairs; their arithmetic is tensor.h's tn__cplx formulas
   in double (tn__cunary, tn__cbinary, ...), the CPU's. Conversions as the CPU's
   (core/complex.c): a real value becomes (value through double, 0); a complex one gives
   its real part to a real dtype, whether it is nonzero to bool. */
template <class R> struct alignas(2 * sizeof(R)) Cx { R re, im; };
typedef Cx<float> c64;
typedef Cx<double> c128;
template <class R> __host__ __device__ __forceinline__ Cx<R> mk_cx(double re, double im) { Cx<R> r; r.re = (R)re; r.im = (R)im; return r; }
template <class R> __device__ __forceinline__ tn__cplx cx_d(Cx<R> z) { return tn__cx(z.re, z.im); }
template <class R> __device__ __forceinline__ Cx<R> cx_r(tn__cplx z) { return mk_cx<R>(z.re, z.im); }
template <class R> struct Cvt<Cx<R>> {
    __host__ __device__ static Cx<R> f(double v) { return mk_cx<R>(v, 0); }
};
template <class TI> __device__ __forceinline__ double real_d(TI x) { return IsFloat<TI>::v ? (double)x : (double)(int64_t)x; }
__device__ __forceinline__ double real_d(h16 x) { return (double)h16_f(x); }
__device__ __forceinline__ double real_d(bf16 x) { return (double)bf16_f(x); }
template <class R, class TI> struct Conv<Cx<R>, TI> { __device__ static Cx<R> c(TI x) { return mk_cx<R>(real_d(x), 0); } };
template <class R> struct Conv<Cx<R>, h16> { __device__ static Cx<R> c(h16 x) { return mk_cx<R>(real_d(x), 0); } };
template <class R> struct Conv<Cx<R>, bf16> { __device__ static Cx<R> c(bf16 x) { return mk_cx<R>(real_d(x), 0); } };
template <class R1, class R2> struct Conv<Cx<R1>, Cx<R2>> { __device__ static Cx<R1> c(Cx<R2> z) { return mk_cx<R1>(z.re, z.im); } };
template <class TO, class R> struct Conv<TO, Cx<R>> { __device__ static TO c(Cx<R> z) { return Cvt<TO>::f((double)z.re); } };
template <class R> struct Conv<bool, Cx<R>> { __device__ static bool c(Cx<R> z) { return z.re != 0 || z.im != 0; } };
template <class TO, class TI> __device__ __forceinline__ TO convert(TI x) { return Conv<TO, TI>::c(x); }

/* One switch over the dtypes the kernels know; body sees the C type as T. */
#define CU_DISPATCH(dtype, T, ...) \
    switch (dtype) { \
    case TN_F32: { typedef float T; __VA_ARGS__; break; } \
    case TN_F64: { typedef double T; __VA_ARGS__; break; } \
    case TN_I32: { typedef int32_t T; __VA_ARGS__; break; } \
    case TN_I64: { typedef int64_t T; __VA_ARGS__; break; } \
    case TN_U8: { typedef uint8_t T; __VA_ARGS__; break; } \
    case TN_BOOL: { typedef bool T; __VA_ARGS__; break; } \
    default: return tn_error("%s: dtype %s is not supported by the GPU unit", fn, tn_dtype_name(dtype)); \
    }

/* CU_DISPATCH with the half and complex dtypes: the copies and fills (the other complex
   kernels have their own paths) */
#define CU_DISPATCH_ALL(dtype, T, ...) \
    switch (dtype) { \
    case TN_F16: { typedef h16 T; __VA_ARGS__; break; } \
    case TN_BF16: { typedef bf16 T; __VA_ARGS__; break; } \
    case TN_C64: { typedef c64 T; __VA_ARGS__; break; } \
    case TN_C128: { typedef c128 T; __VA_ARGS__; break; } \
    default: CU_DISPATCH(dtype, T, __VA_ARGS__) \
    }

template <class TO, class TI> __global__ void k_copy(int64_t n, Geo<2> g, TO *o, const TI *x) {
    GRID_LOOP(i, n) {
        int64_t off[2];
        offsets<2>(g, i, off);
        o[off[0]] = convert<TO>(x[off[1]]);
    }
}
/* contiguous copies in packs of 8 elements: 16-byte loads and stores where the element
   size allows (a 2-byte element copied one at a time reads at a fraction of the bandwidth) */
template <class T> struct alignas(sizeof(T) * 8 < 16 ? sizeof(T) * 8 : 16) Pack8 { T v[8]; };
template <class TO, class TI> __global__ void k_copy_vec(int64_t n, TO *o, const TI *x) {
    const int64_t nv = n / 8;
    GRID_LOOP(i, nv) {
        const Pack8<TI> a = reinterpret_cast<const Pack8<TI> *>(x)[i];
        Pack8<TO> b;
#pragma unroll
        for (int j = 0; j < 8; j++) b.v[j] = convert<TO>(a.v[j]);
        reinterpret_cast<Pack8<TO> *>(o)[i] = b;
    }
    GRID_LOOP(i, n - nv * 8) o[nv * 8 + i] = convert<TO>(x[nv * 8 + i]);
}
template <class T> static bool pack8_aligned(const void *p) { return (uintptr_t)p % alignof(Pack8<T>) == 0; }
template <class T> __global__ void k_fill(int64_t n, Geo<1> g, T *o, T v) {
    GRID_LOOP(i, n) {
        int64_t off[1];
        offsets<1>(g, i, off);
        o[off[0]] = v;
    }
}

/* dst <- src on the device, any dtypes and strides, src broadcast to dst. */
static int dev_copy(tn_tensor *dst, tn_tensor *src) {
    const char *fn = "copy";
    int64_t n = tn_numel(dst);
    if (n == 0) return 0;
    Aligned as = align_to(src, dst->ndim);
    const int64_t *strides[2] = {dst->strides, as.st};
    Geo<2> g = make_geo<2>(dst->shape, dst->ndim, strides);
    CU_DISPATCH_ALL(dst->dtype, TO, {
        const char *fn2 = fn;
        tn_dtype sd = src->dtype;
        {
            const char *fn = fn2;
            CU_DISPATCH_ALL(sd, TI, {
                TO *o = (TO *)base_of(dst);
                const TI *x = (const TI *)base_of(src);
                if (g.contig && !g.scalar[0] && !g.scalar[1] && n >= 8 && pack8_aligned<TO>(o) && pack8_aligned<TI>(x))
                    k_copy_vec<TO, TI><<<blocks_for(n / 8), kThreads, 0, cu_stream()>>>(n, o, x);
                else k_copy<TO, TI><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, o, x);
            })
        }
    })
    CU_LAUNCHED("copy");
    return 0;
}

/* A contiguous tensor header over raw device memory (no storage refcount games: the
   storage struct lives beside it). */
struct DevTensor {
    tn_storage s;
    tn_tensor t;
    DevTensor(void *data, tn_dtype dtype, const int64_t *shape, int ndim, tn_device dev) {
        memset(&s, 0, sizeof s);
        memset(&t, 0, sizeof t);
        s.data = data;
        s.device = dev;
        t.storage = &s;
        t.dtype = dtype;
        t.device = dev;
        t.ndim = ndim;
        int64_t st = 1;
        for (int d = ndim - 1; d >= 0; d--) {
            t.shape[d] = shape[d];
            t.strides[d] = st;
            st *= shape[d] > 1 ? shape[d] : 1;
        }
    }
};

static bool plain_contiguous(const tn_tensor *t) { return tn_is_contiguous(t); }
static bool same_shape(const tn_tensor *a, const tn_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

/* tn_cuda_stats' transfer counters: every copy between host and device (a synchronous one
   waits for the queue too), every other wait for the device */
static std::atomic<int64_t> n_h2d, n_d2h, n_syncs;
static void count_transfer(bool up, bool sync) {
    (up ? n_h2d : n_d2h)++;
    if (sync) n_syncs++;
}

/* Host <-> device: one cudaMemcpy of contiguous bytes; conversion, broadcasting and
   strides are done on the device side (or by the CPU backend for a strided CPU side). */
static int cu_copy_impl(tn_tensor *dst, tn_tensor *src, bool async) {
    cudaMemcpyKind kind;
    if (dst->device == TN_CUDA && src->device == TN_CUDA) return dev_copy(dst, src);
    int64_t n = tn_numel(dst);
    if (n == 0) return 0;
    size_t es = tn_dtype_size(dst->dtype), nb = (size_t)n * es;
    const tn_backend *cpu = tn_get_backend(TN_CPU);
    if (dst->device == TN_CUDA) { /* upload */
        kind = cudaMemcpyHostToDevice;
        bool direct = plain_contiguous(src) && src->dtype == dst->dtype && same_shape(src, dst);
        std::vector<char> host;
        const void *from = base_of(src);
        if (!direct) { /* src as dst's dtype and shape, contiguous, on the host */
            host.resize(nb);
            DevTensor h(host.data(), dst->dtype, dst->shape, dst->ndim, TN_CPU);
            if (cpu->copy(&h.t, src)) return -1;
            from = host.data();
            async = false;
        }
        if (plain_contiguous(dst)) {
            if (async) CU_CHECK("copy to the GPU", cudaMemcpyAsync(base_of(dst), from, nb, kind, 0));
            else CU_CHECK("copy to the GPU", cudaMemcpy(base_of(dst), from, nb, kind));
            count_transfer(true, !async);
            return 0;
        }
        Scratch sc;
        void *tmp = sc.get(nb);
        if (!tmp) return -1;
        CU_CHECK("copy to the GPU", cudaMemcpy(tmp, from, nb, kind));
        count_transfer(true, true);
        DevTensor d(tmp, dst->dtype, dst->shape, dst->ndim, TN_CUDA);
        return dev_copy(dst, &d.t);
    }
    /* download: src as dst's dtype and shape, contiguous, on the device first */
    kind = cudaMemcpyDeviceToHost;
    Scratch sc;
    const void *from = base_of(src);
    if (!(plain_contiguous(src) && src->dtype == dst->dtype && same_shape(src, dst))) {
        void *tmp = sc.get(nb);
        if (!tmp) return -1;
        DevTensor d(tmp, dst->dtype, dst->shape, dst->ndim, TN_CUDA);
        if (dev_copy(&d.t, src)) return -1;
        from = tmp;
    }
    if (plain_contiguous(dst)) {
        CU_CHECK("copy from the GPU", cudaMemcpy(base_of(dst), from, nb, kind));
        count_transfer(false, true);
        return 0;
    }
    std::vector<char> host(nb);
    CU_CHECK("copy from the GPU", cudaMemcpy(host.data(), from, nb, kind));
    count_transfer(false, true);
    DevTensor h(host.data(), dst->dtype, dst->shape, dst->ndim, TN_CPU);
    return cpu->copy(dst, &h.t);
}
static int cu_copy(tn_tensor *dst, tn_tensor *src) { return cu_copy_impl(dst, src, false); }
/* Pinned host memory with an asynchronous upload in flight: the event recorded after its
   last upload, waited for before cudaFreeHost (which is not documented to wait for copies
   from the block it frees). */
struct PinnedUses {
    std::mutex mu;
    std::unordered_map<void *, cudaEvent_t> last;
};
static PinnedUses &pinned_uses(void) {
    static PinnedUses p;
    return p;
}
static int pinned_mark(void *block) {
    PinnedUses &u = pinned_uses();
    std::lock_guard<std::mutex> lock(u.mu);
    auto it = u.last.find(block);
    cudaEvent_t ev;
    if (it != u.last.end()) ev = it->second;
    else {
        CU_CHECK("tn_to_non_blocking", cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
        u.last[block] = ev;
    }
    CU_CHECK("tn_to_non_blocking", cudaEventRecord(ev, 0));   /* the default stream, after the copy */
    return 0;
}
static void pinned_release(void *block) {
    PinnedUses &u = pinned_uses();
    std::lock_guard<std::mutex> lock(u.mu);
    auto it = u.last.find(block);
    if (it == u.last.end()) return;
    cudaEventSynchronize(it->second);   /* the block's last upload has read it */
    cudaEventDestroy(it->second);
    u.last.erase(it);
}
static int cu_copy_async(tn_tensor *dst, tn_tensor *src) {
    bool pinned_up = dst->device == TN_CUDA && src->device == TN_CPU && tn_is_pinned(src);
    if (cu_copy_impl(dst, src, pinned_up) < 0) return -1;
    if (pinned_up && pinned_mark(src->storage->data) < 0) return -1;
    return pinned_up || (dst->device == TN_CUDA && src->device == TN_CUDA) ? 0 : 1;
}

static int cu_fill(tn_tensor *dst, double value) {
    const char *fn = "fill";
    int64_t n = tn_numel(dst);
    if (n == 0) return 0;
    const int64_t *strides[1] = {dst->strides};
    Geo<1> g = make_geo<1>(dst->shape, dst->ndim, strides);
    /* the value converted by the same rules as a copy (on the host: no round trip) */
    CU_DISPATCH_ALL(dst->dtype, T, k_fill<T><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (T *)base_of(dst), Cvt<T>::f(value)))
    CU_LAUNCHED("fill");
    return 0;
}

/* ---- unary ---- */
/* float math by overload, so one template serves float and double */
#define CU_MATH1(name) \
    __device__ __forceinline__ float m_##name(float x) { return name##f(x); } \
    __device__ __forceinline__ double m_##name(double x) { return name(x); }
CU_MATH1(fabs) CU_MATH1(floor) CU_MATH1(ceil) CU_MATH1(nearbyint) CU_MATH1(trunc) CU_MATH1(exp) CU_MATH1(exp2)
CU_MATH1(log) CU_MATH1(log2) CU_MATH1(log10) CU_MATH1(log1p) CU_MATH1(expm1) CU_MATH1(sqrt) CU_MATH1(sin)
CU_MATH1(cos) CU_MATH1(tan) CU_MATH1(asin) CU_MATH1(acos) CU_MATH1(atan) CU_MATH1(sinh) CU_MATH1(cosh)
CU_MATH1(tanh) CU_MATH1(erf) CU_MATH1(erfc) CU_MATH1(asinh) CU_MATH1(acosh) CU_MATH1(atanh)
#define CU_MATH2(name) \
    __device__ __forceinline__ float m_##name(float a, float b) { return name##f(a, b); } \
    __device__ __forceinline__ double m_##name(double a, double b) { return name(a, b); }
CU_MATH2(fmod) CU_MATH2(pow) CU_MATH2(atan2) CU_MATH2(copysign) CU_MATH2(fmax) CU_MATH2(fmin) CU_MATH2(hypot) CU_MATH2(nextafter)
__device__ __forceinline__ float m_frexp(float x, int *e) { return frexpf(x, e); }
__device__ __forceinline__ double m_frexp(double x, int *e) { return frexp(x, e); }
/* the shared activations, by overload */
#define CU_HD1(name) \
    __device__ __forceinline__ float h_##name(float x) { return tn_##name##_f32(x); } \
    __device__ __forceinline__ double h_##name(double x) { return tn_##name##_f64(x); }
CU_HD1(sigmoid) CU_HD1(gelu) CU_HD1(gelu_tanh) CU_HD1(silu) CU_HD1(mish) CU_HD1(hardswish) CU_HD1(hardsigmoid)
__device__ __forceinline__ float h_softplus(float x, float b, float t) { return tn_softplus_f32(x, b, t); }
__device__ __forceinline__ double h_softplus(double x, double b, double t) { return tn_softplus_f64(x, b, t); }
__device__ __forceinline__ float h_leaky_relu(float x, float s) { return tn_leaky_relu_f32(x, s); }
__device__ __forceinline__ double h_leaky_relu(double x, double s) { return tn_leaky_relu_f64(x, s); }
__device__ __forceinline__ float h_elu(float x, float a, float s, float i) { return tn_elu_f32(x, a, s, i); }
__device__ __forceinline__ double h_elu(double x, double a, double s, double i) { return tn_elu_f64(x, a, s, i); }
__device__ __forceinline__ float h_hardtanh(float x, float l, float h) { return tn_hardtanh_f32(x, l, h); }
__device__ __forceinline__ double h_hardtanh(double x, double l, double h) { return tn_hardtanh_f64(x, l, h); }
/* section 7's elementwise formulas, by overload */
CU_HD1(sinc) CU_HD1(trigamma)
#define CU_HD2(name) \
    __device__ __forceinline__ float h_##name(float a, float b) { return tn_##name##_f32(a, b); } \
    __device__ __forceinline__ double h_##name(double a, double b) { return tn_##name##_f64(a, b); }
CU_HD2(logit) CU_HD2(logaddexp) CU_HD2(logaddexp2) CU_HD2(xlogy) CU_HD2(xlog1py) CU_HD2(heaviside) CU_HD2(gelu_backward) CU_HD2(gelu_tanh_backward)
__device__ __forceinline__ float h_orthopoly(int k, float x, float n) { return (float)tn_orthopoly_f64(k, x, n); }
__device__ __forceinline__ double h_orthopoly(int k, double x, double n) { return tn_orthopoly_f64(k, x, n); }

/* x < 0 without an "always false" warning for unsigned types */
template <class T> __device__ __forceinline__ bool isneg(T x) { return x < 1 && x != 0; }

struct UnaryArgs { int op; double p0, p1, p2; };

/* Unary ops with an output of the input's type (float types); returns false if not one. */
template <class T> __device__ __forceinline__ T unary_float(const UnaryArgs &u, T x) {
    const T lo = (T)u.p0, hi = (T)u.p1, p2 = (T)u.p2;
    switch ((tn_unary_op)u.op) {
    case NEG: return -x;
    case ABS: return m_fabs(x);
    case SIGN: return (T)((x > 0) - (x < 0));
    case SQUARE: return x * x;
    case RELU: return x < 0 ? (T)0 : x;
    case FLOOR: return m_floor(x);
    case CEIL: return m_ceil(x);
    case ROUND: return m_nearbyint(x);
    case TRUNC: return m_trunc(x);
    case FRAC: return x - m_trunc(x);
    case CLAMP: return (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x);
    case NAN_TO_NUM: return x != x ? lo : x == (T)INFINITY ? hi : x == -(T)INFINITY ? p2 : x;
    case EXP: return m_exp(x);
    case EXP2: return m_exp2(x);
    case LOG: return m_log(x);
    case LOG2: return m_log2(x);
    case LOG10: return m_log10(x);
    case LOG1P: return m_log1p(x);
    case EXPM1: return m_expm1(x);
    case SQRT: return m_sqrt(x);
    case RSQRT: return (T)1 / m_sqrt(x);
    case RECIPROCAL: return (T)1 / x;
    case SIN: return m_sin(x);
    case COS: return m_cos(x);
    case TAN: return m_tan(x);
    case ASIN: return m_asin(x);
    case ACOS: return m_acos(x);
    case ATAN: return m_atan(x);
    case SINH: return m_sinh(x);
    case COSH: return m_cosh(x);
    case TANH: return m_tanh(x);
    case ASINH: return m_asinh(x);
    case ACOSH: return m_acosh(x);
    case ATANH: return m_atanh(x);
    case SIGMOID: return h_sigmoid(x);
    case GELU: return h_gelu(x);
    case GELU_TANH: return h_gelu_tanh(x);
    case SILU: return h_silu(x);
    case SOFTPLUS: return h_softplus(x, lo, hi);
    case LEAKY_RELU: return h_leaky_relu(x, lo);
    case ELU: return h_elu(x, lo, hi, p2);
    case HARDTANH: return x != x ? x : h_hardtanh(x, lo, hi);
    case MISH: return h_mish(x);
    case HARDSWISH: return h_hardswish(x);
    case HARDSIGMOID: return h_hardsigmoid(x);
    case ERF: return m_erf(x);
    case ERFC: return m_erfc(x);
    case ERFINV: return (T)tn_erfinv_f64((double)x);
    case LGAMMA: return (T)tn_lgamma_f64((double)x);
    case DIGAMMA: return (T)tn_digamma_f64((double)x);
    case POLYGAMMA: return u.p0 == 1 ? h_trigamma(x) : (T)tn_polygamma_f64((int64_t)u.p0, (double)x);
    case I0: return (T)tn_i0_f64((double)x);
    case I0E: return (T)tn_i0e_f64((double)x);
    case I1: return (T)tn_i1_f64((double)x);
    case I1E: return (T)tn_i1e_f64((double)x);
    case SINC: return h_sinc(x);
    case LOGIT: return h_logit(x, lo);
    case NDTR: return (T)tn_ndtr_f64((double)x);
    case NDTRI: return (T)tn_ndtri_f64((double)x);
    case LOG_NDTR: return (T)tn_log_ndtr_f64((double)x);
    case ERFCX: return (T)tn_erfcx_f64((double)x);
    case ENTR: return (T)tn_entr_f64((double)x);
    case BESSEL_J0: return (T)tn_bessel_j0_f64((double)x);
    case BESSEL_J1: return (T)tn_bessel_j1_f64((double)x);
    case BESSEL_Y0: return (T)tn_bessel_y_f64(0, (double)x);
    case BESSEL_Y1: return (T)tn_bessel_y_f64(1, (double)x);
    case MODIFIED_BESSEL_I0: return (T)tn_i0_f64((double)x);
    case MODIFIED_BESSEL_I1: return (T)tn_i1_f64((double)x);
    case MODIFIED_BESSEL_K0: return (T)tn_bessel_k_f64(0, (double)x, false);
    case MODIFIED_BESSEL_K1: return (T)tn_bessel_k_f64(1, (double)x, false);
    case SCALED_MODIFIED_BESSEL_K0: return (T)tn_bessel_k_f64(0, (double)x, true);
    case SCALED_MODIFIED_BESSEL_K1: return (T)tn_bessel_k_f64(1, (double)x, true);
    case SPHERICAL_BESSEL_J0: return (T)tn_spherical_bessel_j0_f64((double)x);
    case AIRY_AI: return (T)tn_airy_ai_f64((double)x);
    case FREXP_MANTISSA: { int e; return m_frexp(x, &e); }
    case FREXP_EXPONENT: { int e; m_frexp(x, &e); return x == x && !isinf(x) ? (T)e : (T)0; }
    default: return x;
    }
}
template <class T, class U> __device__ __forceinline__ T unary_int(const UnaryArgs &u, T x) {
    switch ((tn_unary_op)u.op) {
    case NEG: return (T)((U)0 - (U)x);
    case ABS: return isneg(x) ? (T)((U)0 - (U)x) : x;
    case SIGN: return (T)((x > 0) - isneg(x));
    case SQUARE: return (T)((U)x * (U)x);
    case RELU: return isneg(x) ? (T)0 : x;
    case CLAMP: return (double)x > u.p1 || u.p0 > u.p1 ? (T)u.p1 : (double)x < u.p0 ? (T)u.p0 : x;
    case BITWISE_NOT: return (T)~x;
    default: return x; /* FLOOR, CEIL, ROUND, TRUNC, NAN_TO_NUM */
    }
}
template <class T> struct UnaryVal;
template <> struct UnaryVal<float> { __device__ static float f(const UnaryArgs &u, float x) { return unary_float(u, x); } };
template <> struct UnaryVal<double> { __device__ static double f(const UnaryArgs &u, double x) { return unary_float(u, x); } };
template <> struct UnaryVal<int32_t> { __device__ static int32_t f(const UnaryArgs &u, int32_t x) { return unary_int<int32_t, uint32_t>(u, x); } };
template <> struct UnaryVal<int64_t> { __device__ static int64_t f(const UnaryArgs &u, int64_t x) { return unary_int<int64_t, uint64_t>(u, x); } };
template <> struct UnaryVal<uint8_t> { __device__ static uint8_t f(const UnaryArgs &u, uint8_t x) { return unary_int<uint8_t, uint8_t>(u, x); } };
template <> struct UnaryVal<bool> {
    __device__ static bool f(const UnaryArgs &u, bool x) {
        if (u.op == CLAMP) return (double)x < u.p0 ? u.p0 != 0 : (double)x > u.p1 ? u.p1 != 0 : x;
        if (u.op == BITWISE_NOT) return !x;
        return x;
    }
};
template <class T> __device__ __forceinline__ bool is_inf(T) { return false; }
__device__ __forceinline__ bool is_inf(float x) { return isinf(x); }
__device__ __forceinline__ bool is_inf(double x) { return isinf(x); }
template <class T> __device__ __forceinline__ bool sign_bit(T x) { return isneg(x); }
__device__ __forceinline__ bool sign_bit(float x) { return signbit(x); }
__device__ __forceinline__ bool sign_bit(double x) { return signbit(x); }
__device__ __forceinline__ bool sign_bit(bool) { return false; }
template <class T> __device__ __forceinline__ bool unary_pred(int op, T x) {
    switch ((tn_unary_op)op) {
    case SIGNBIT: return sign_bit(x);
    case ISNAN: return x != x;
    case ISINF: return is_inf(x);
    case ISFINITE: return x == x && !is_inf(x);
    default: return x == 0; /* LOGICAL_NOT */
    }
}
template <class T> __global__ void k_unary(int64_t n, Geo<2> g, T *o, const T *x, UnaryArgs u) {
    GRID_LOOP(i, n) {
        int64_t off[2];
        offsets<2>(g, i, off);
        o[off[0]] = UnaryVal<T>::f(u, ld(g, 1, x, off[1]));
    }
}
/* Contiguous floating operands on 16-byte boundaries: 16 bytes per load and store (four
   floats, two doubles), the tail element by element. */
template <class T> struct alignas(16) Pack16 { T v[16 / sizeof(T)]; };
static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }
template <class T> __global__ void k_unary_vec(int64_t n, T *o, const T *x, UnaryArgs u) {
    constexpr int W = 16 / sizeof(T);
    const int64_t nv = n / W;
    GRID_LOOP(i, nv) {
        Pack16<T> p = reinterpret_cast<const Pack16<T> *>(x)[i];
#pragma unroll
        for (int j = 0; j < W; j++) p.v[j] = UnaryVal<T>::f(u, p.v[j]);
        reinterpret_cast<Pack16<T> *>(o)[i] = p;
    }
    GRID_LOOP(i, n - nv * W) o[nv * W + i] = UnaryVal<T>::f(u, x[nv * W + i]);
}
/* the packed paths exist for float and double only: false (not launched) otherwise */
template <class T> static bool launch_unary_vec(int64_t, T *, const T *, const UnaryArgs &) { return false; }
static bool launch_unary_vec(int64_t n, float *o, const float *x, const UnaryArgs &u) {
    k_unary_vec<float><<<blocks_for(n / 4 + 1), kThreads, 0, cu_stream()>>>(n, o, x, u);
    return true;
}
static bool launch_unary_vec(int64_t n, double *o, const double *x, const UnaryArgs &u) {
    k_unary_vec<double><<<blocks_for(n / 2 + 1), kThreads, 0, cu_stream()>>>(n, o, x, u);
    return true;
}
template <class T> __global__ void k_unary_pred(int64_t n, Geo<2> g, bool *o, const T *x, int op) {
    GRID_LOOP(i, n) {
        int64_t off[2];
        offsets<2>(g, i, off);
        o[off[0]] = unary_pred(op, ld(g, 1, x, off[1]));
    }
}
/* which (op, dtype) pairs exist: the CPU's table */
static bool unary_supported(tn_unary_op op, tn_dtype d) {
    bool fl = d == TN_F32 || d == TN_F64;
    switch (op) {
    case ISNAN: case ISINF: case ISFINITE: return fl;
    case LOGICAL_NOT: case SIGNBIT: return true;
    case BITWISE_NOT: return !fl;
    case NEG: case ABS: case SQUARE: case RELU: return d != TN_BOOL;
    case SIGN: case FLOOR: case CEIL: case ROUND: case TRUNC: case NAN_TO_NUM: case CLAMP: return true;
    default: return fl;
    }
}
/* out <- f(x)'s launch geometry (cu_unary's and cu_unary_cx's): x's strides aligned to
   out's shape, a 0-d CPU x marked to travel by value; -1 after recording an error */
static int unary_geo(tn_tensor *out, tn_tensor *x, const char *fn, Geo<2> *g) {
    Aligned ax = align_to(x, out->ndim);
    const int64_t *strides[2] = {out->strides, ax.st};
    *g = make_geo<2>(out->shape, out->ndim, strides);
    tn_tensor *ops[2] = {out, x};
    return mark_host<2>(*g, ops, fn);
}
/* complex operands: the ops tn__cuda_complex_has lists (src/api.h), tensor.h's formulas in
   double as on the CPU; ABS writes the real dtype, the predicates bool */
template <class R> __global__ void k_unary_cx(int64_t n, Geo<2> g, void *o, const Cx<R> *x, int op) {
    GRID_LOOP(i, n) {
        int64_t off[2];
        offsets<2>(g, i, off);
        const tn__cplx v = cx_d(ld(g, 1, x, off[1]));
        switch (op) {
        case ABS: ((R *)o)[off[0]] = (R)tn__cabs(v); break;
        case ISNAN: ((bool *)o)[off[0]] = v.re != v.re || v.im != v.im; break;
        case ISINF: ((bool *)o)[off[0]] = isinf(v.re) || isinf(v.im); break;
        case ISFINITE: ((bool *)o)[off[0]] = isfinite(v.re) && isfinite(v.im); break;
        case LOGICAL_NOT: ((bool *)o)[off[0]] = v.re == 0 && v.im == 0; break;
        default: ((Cx<R> *)o)[off[0]] = cx_r<R>(tn__cunary(op, v, sizeof(R) == 4));
        }
    }
}
static int cu_unary_cx(tn_unary_op op, tn_tensor *out, tn_tensor *x) {
    if (!tn__cuda_complex_has(TN__CX_UNARY, op)) return tn__cuda_complex_decline(TN__CX_UNARY, op, x->dtype);
    const char *fn = tn_unary_op_name(op);
    const int64_t n = tn_numel(out);
    Geo<2> g;
    if (n == 0) return 0;
    if (unary_geo(out, x, fn, &g)) return -1;
    if (x->dtype == TN_C64) k_unary_cx<float><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, base_of(out), (const c64 *)dev_ptr(x), (int)op);
    else k_unary_cx<double><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, base_of(out), (const c128 *)dev_ptr(x), (int)op);
    CU_LAUNCHED(fn);
    return 0;
}
static int cu_unary(tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *params) {
    const char *fn = tn_unary_op_name(op);
    if (tn_dtype_is_complex(x->dtype)) return cu_unary_cx(op, out, x);
    if (!unary_supported(op, x->dtype)) return tn_error("%s: not implemented for dtype %s", fn, tn_dtype_name(x->dtype));
    int64_t n = tn_numel(out);
    Geo<2> g;
    if (n == 0) return 0;
    if (unary_geo(out, x, fn, &g)) return -1;
    UnaryArgs u;
    u.op = op;
    u.p0 = params ? params[0] : 0;
    u.p1 = params ? params[1] : 0;
    u.p2 = params ? params[2] : 0;
    bool pred = op == ISNAN || op == ISINF || op == ISFINITE || op == SIGNBIT || (op == LOGICAL_NOT && x->dtype != TN_BOOL);
    if (op == LOGICAL_NOT && x->dtype == TN_BOOL) u.op = BITWISE_NOT;
    const bool vec = !pred && g.contig && !g.scalar[0] && !g.scalar[1] && !g.host[1] && aligned16(base_of(out)) && aligned16(dev_ptr(x));
    CU_DISPATCH(x->dtype, T, {
        if (pred) k_unary_pred<T><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (bool *)base_of(out), (const T *)dev_ptr(x), (int)op);
        else if (!(vec && launch_unary_vec(n, (T *)base_of(out), (const T *)dev_ptr(x), u)))
            k_unary<T><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (T *)base_of(out), (const T *)dev_ptr(x), u);
    })
    CU_LAUNCHED(fn);
    return 0;
}

/* ---- binary ---- */
template <class T> __device__ __forceinline__ T floordiv_f(T a, T b) {
    if (b == 0) return a / b;
    T mod = m_fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    if (div == 0) return m_copysign((T)0, a / b);
    T fl = m_floor(div);
    return div - fl > (T)0.5 ? fl + 1 : fl;
}
template <class T> __device__ __forceinline__ T remainder_f(T a, T b) {
    T r = m_fmod(a, b);
    return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
}
template <class T> __device__ __forceinline__ T binary_float(int op, T a, T b, T alpha) {
    switch ((tn_binary_op)op) {
    case ADD: return alpha == 1 ? a + b : a + alpha * b;
    case SUB: return alpha == 1 ? a - b : a - alpha * b;
    case MUL: return a * b;
    case DIV: return a / b;
    case FLOOR_DIVIDE: return floordiv_f(a, b);
    case REMAINDER: return remainder_f(a, b);
    case FMOD: return m_fmod(a, b);
    case POW: return m_pow(a, b);
    case ATAN2: return m_atan2(a, b);
    case MAXIMUM: return (a != a || a > b) ? a : b;
    case THRESHOLD_BACKWARD: return b <= alpha ? (T)0 : a; /* relu's backward: 0 where b <= alpha (a NaN b passes a) */
    case GELU_BACKWARD: return h_gelu_backward(a, b);
    case GELU_TANH_BACKWARD: return h_gelu_tanh_backward(a, b);
    case FMAX: return m_fmax(a, b);
    case FMIN: return m_fmin(a, b);
    case LOGADDEXP: return h_logaddexp(a, b);
    case LOGADDEXP2: return h_logaddexp2(a, b);
    case HYPOT: return m_hypot(a, b);
    case XLOGY: return h_xlogy(a, b);
    case XLOG1PY: return h_xlog1py(a, b);
    case ZETA: return (T)tn_zeta_f64((double)a, (double)b);
    case GAMMAINC: return (T)tn_igamma_f64((double)a, (double)b, false);
    case GAMMAINCC: return (T)tn_igamma_f64((double)a, (double)b, true);
    case CHEBYSHEV_POLYNOMIAL_T: return h_orthopoly(0, a, b);
    case CHEBYSHEV_POLYNOMIAL_U: return h_orthopoly(1, a, b);
    case CHEBYSHEV_POLYNOMIAL_V: return h_orthopoly(2, a, b);
    case CHEBYSHEV_POLYNOMIAL_W: return h_orthopoly(3, a, b);
    case HERMITE_POLYNOMIAL_H: return h_orthopoly(4, a, b);
    case HERMITE_POLYNOMIAL_HE: return h_orthopoly(5, a, b);
    case LAGUERRE_POLYNOMIAL_L: return h_orthopoly(6, a, b);
    case LEGENDRE_POLYNOMIAL_P: return h_orthopoly(7, a, b);
    case SHIFTED_CHEBYSHEV_POLYNOMIAL_T: return h_orthopoly(0, (T)2 * a - (T)1, b);
    case SHIFTED_CHEBYSHEV_POLYNOMIAL_U: return h_orthopoly(1, (T)2 * a - (T)1, b);
    case SHIFTED_CHEBYSHEV_POLYNOMIAL_V: return h_orthopoly(2, (T)2 * a - (T)1, b);
    case SHIFTED_CHEBYSHEV_POLYNOMIAL_W: return h_orthopoly(3, (T)2 * a - (T)1, b);
    case COPYSIGN: return m_copysign(a, b);
    case NEXTAFTER: return m_nextafter(a, b);
    case HEAVISIDE: return h_heaviside(a, b);
    default: return (a != a || a < b) ? a : b; /* MINIMUM */
    }
}
/* integer ops wrap through the unsigned type U; *bad = 2 on division by zero */
template <class T, class U, bool SIGNED> __device__ __forceinline__ T binary_int(int op, T a, T b, U alpha, int *bad) {
    switch ((tn_binary_op)op) {
    case ADD: return (T)((U)a + alpha * (U)b);
    case SUB: return (T)((U)a - alpha * (U)b);
    case MUL: return (T)((U)a * (U)b);
    case FLOOR_DIVIDE: {
        if (b == 0) { *bad = 2; return 0; }
        if (SIGNED && b == (T)-1) return (T)((U)0 - (U)a);
        T q = (T)(a / b);
        return (a % b != 0 && (isneg(a) != isneg(b))) ? (T)(q - 1) : q;
    }
    case REMAINDER: case FMOD: {
        if (b == 0) { *bad = 2; return 0; }
        if (SIGNED && b == (T)-1) return 0;
        T r = (T)(a % b);
        return (op == REMAINDER && r != 0 && (isneg(r) != isneg(b))) ? (T)(r + b) : r;
    }
    case POW: {
        if (isneg(b)) { if (a == 1) return 1; if (SIGNED && a == (T)-1) return (b & 1) ? a : 1; return 0; }
        U r = 1, base = (U)a;
        for (uint64_t e = (uint64_t)b; e; e >>= 1) { if (e & 1) r = (U)(r * base); base = (U)(base * base); }
        return (T)r;
    }
    case MAXIMUM: case FMAX: return a > b ? a : b;
    case MINIMUM: case FMIN: return a < b ? a : b;
    case HEAVISIDE: return a == 0 ? b : (T)(a > 0);
    case GCD: return (T)tn_gcd_u64(isneg(a) ? (U)0 - (U)a : (U)a, isneg(b) ? (U)0 - (U)b : (U)b);
    case LCM: {
        const U ua = isneg(a) ? (U)0 - (U)a : (U)a, ub = isneg(b) ? (U)0 - (U)b : (U)b, g = (U)tn_gcd_u64(ua, ub);
        return g == 0 ? (T)0 : (T)(U)((U)(ua / g) * ub);
    }
    case BITWISE_AND: return a & b;
    case BITWISE_OR: return a | b;
    case BITWISE_LEFT_SHIFT: return isneg(b) || (uint64_t)b >= 8 * sizeof(T) ? (T)0 : (T)((U)a << (int)b);   /* as kernels.c's tn__shl */
    case BITWISE_RIGHT_SHIFT: {   /* as kernels.c's tn__shr */
        const int w = 8 * (int)sizeof(T) - (SIGNED ? 1 : 0), k = isneg(b) || (uint64_t)b >= (uint64_t)w ? w : (int)b;
        return isneg(a) ? (T)~(T)(~a >> k) : (T)(a >> k);
    }
    default: return a ^ b; /* BITWISE_XOR */
    }
}
template <class T> struct BinaryVal;
template <> struct BinaryVal<float> { __device__ static float f(int op, float a, float b, double al, int *) { return binary_float(op, a, b, (float)al); } };
template <> struct BinaryVal<double> { __device__ static double f(int op, double a, double b, double al, int *) { return binary_float(op, a, b, al); } };
template <> struct BinaryVal<int32_t> {
    __device__ static int32_t f(int op, int32_t a, int32_t b, double al, int *bad) { return binary_int<int32_t, uint32_t, true>(op, a, b, (uint32_t)(int64_t)al, bad); }
};
template <> struct BinaryVal<int64_t> {
    __device__ static int64_t f(int op, int64_t a, int64_t b, double al, int *bad) { return binary_int<int64_t, uint64_t, true>(op, a, b, (uint64_t)(int64_t)al, bad); }
};
template <> struct BinaryVal<uint8_t> {
    __device__ static uint8_t f(int op, uint8_t a, uint8_t b, double al, int *bad) { return binary_int<uint8_t, uint8_t, false>(op, a, b, (uint8_t)(int64_t)al, bad); }
};
template <> struct BinaryVal<bool> {
    __device__ static bool f(int op, bool a, bool b, double al, int *) {
        switch ((tn_binary_op)op) {
        case ADD: if (al == 0) return a; return a || b;
        case MAXIMUM: case FMAX: case HEAVISIDE: case BITWISE_OR: case LOGICAL_OR: return a || b;
        case MUL: case MINIMUM: case FMIN: case BITWISE_AND: case LOGICAL_AND: return a && b;
        default: return a != b; /* BITWISE_XOR, LOGICAL_XOR */
        }
    }
};
template <class T> __device__ __forceinline__ bool compare(int op, T a, T b) {
    switch ((tn_binary_op)op) {
    case EQ: return a == b;
    case NE: return a != b;
    case LT: return a < b;
    case LE: return a <= b;
    case GT: return a > b;
    default: return a >= b;
    }
}
/* a failed device-side check: the value, then the flag, into the host's slot (tn_deferred_check) */
__device__ __forceinline__ void report_bad(int64_t *err, int64_t value) {
    err[1] = value;
    __threadfence_system();
    err[0] = 1;
}
template <class T> __global__ void k_binary(int64_t n, Geo<3> g, T *o, const T *a, const T *b, int op, double alpha, int64_t *err) {
    int flag = 0;
    GRID_LOOP(i, n) {
        int64_t off[3];
        offsets<3>(g, i, off);
        o[off[0]] = BinaryVal<T>::f(op, ld(g, 1, a, off[1]), ld(g, 2, b, off[2]), alpha, &flag);
    }
    if (flag && err) report_bad(err, 0);
}
/* contiguous floating operands, each in 16-byte packs or one broadcast value */
template <class T> __global__ void k_binary_vec(int64_t n, Geo<3> g, T *o, const T *a, const T *b, int op, double alpha) {
    constexpr int W = 16 / sizeof(T);
    const int64_t nv = n / W;
    const bool sa = g.scalar[1], sb = g.scalar[2];
    const T a0 = sa ? ld(g, 1, a, 0) : (T)0, b0 = sb ? ld(g, 2, b, 0) : (T)0;
    int flag = 0;
    GRID_LOOP(i, nv) {
        Pack16<T> pa = {}, pb = {}, po;
        if (!sa) pa = reinterpret_cast<const Pack16<T> *>(a)[i];
        if (!sb) pb = reinterpret_cast<const Pack16<T> *>(b)[i];
#pragma unroll
        for (int j = 0; j < W; j++) po.v[j] = BinaryVal<T>::f(op, sa ? a0 : pa.v[j], sb ? b0 : pb.v[j], alpha, &flag);
        reinterpret_cast<Pack16<T> *>(o)[i] = po;
    }
    GRID_LOOP(i, n - nv * W) {
        const int64_t k = nv * W + i;
        o[k] = BinaryVal<T>::f(op, sa ? a0 : a[k], sb ? b0 : b[k], alpha, &flag);
    }
}
template <class T> static bool launch_binary_vec(int64_t, const Geo<3> &, T *, const T *, const T *, int, double) { return false; }
static bool launch_binary_vec(int64_t n, const Geo<3> &g, float *o, const float *a, const float *b, int op, double alpha) {
    k_binary_vec<float><<<blocks_for(n / 4 + 1), kThreads, 0, cu_stream()>>>(n, g, o, a, b, op, alpha);
    return true;
}
static bool launch_binary_vec(int64_t n, const Geo<3> &g, double *o, const double *a, const double *b, int op, double alpha) {
    k_binary_vec<double><<<blocks_for(n / 2 + 1), kThreads, 0, cu_stream()>>>(n, g, o, a, b, op, alpha);
    return true;
}
template <class T> __global__ void k_compare(int64_t n, Geo<3> g, bool *o, const T *a, const T *b, int op) {
    GRID_LOOP(i, n) {
        int64_t off[3];
        offsets<3>(g, i, off);
        o[off[0]] = compare(op, ld(g, 1, a, off[1]), ld(g, 2, b, off[2]));
    }
}
static bool binary_supported(tn_binary_op op, tn_dtype d) {
    bool fl = d == TN_F32 || d == TN_F64;
    switch (op) {
    case ADD: case SUB: case MUL: case MAXIMUM: case MINIMUM: case EQ: case NE: case LT: case LE: case GT: case GE: return d != TN_BOOL || op != SUB;
    case DIV: case ATAN2: case THRESHOLD_BACKWARD: case GELU_BACKWARD: case GELU_TANH_BACKWARD: case LOGADDEXP: case LOGADDEXP2: case HYPOT: case XLOGY: case XLOG1PY:
    case ZETA: case GAMMAINC: case GAMMAINCC: case CHEBYSHEV_POLYNOMIAL_T: case CHEBYSHEV_POLYNOMIAL_U: case CHEBYSHEV_POLYNOMIAL_V: case CHEBYSHEV_POLYNOMIAL_W:
    case HERMITE_POLYNOMIAL_H: case HERMITE_POLYNOMIAL_HE: case LAGUERRE_POLYNOMIAL_L: case LEGENDRE_POLYNOMIAL_P: case SHIFTED_CHEBYSHEV_POLYNOMIAL_T: case SHIFTED_CHEBYSHEV_POLYNOMIAL_U: case SHIFTED_CHEBYSHEV_POLYNOMIAL_V: case SHIFTED_CHEBYSHEV_POLYNOMIAL_W:
    case COPYSIGN: case NEXTAFTER: return fl;
    case FMAX: case FMIN: case HEAVISIDE: return true;
    case GCD: case LCM: return !fl && d != TN_BOOL;
    case FLOOR_DIVIDE: case REMAINDER: case FMOD: case POW: return d != TN_BOOL;
    case BITWISE_AND: case BITWISE_OR: case BITWISE_XOR: return !fl;
    case BITWISE_LEFT_SHIFT: case BITWISE_RIGHT_SHIFT: return !fl && d != TN_BOOL;
    default: return d == TN_BOOL; /* LOGICAL_* */
    }
}
/* complex operands (tn__cuda_complex_has): tn__cbinary's formulas; comparisons and logical
   ops write bool */
template <class R> __global__ void k_binary_cx(int64_t n, Geo<3> g, void *o, const Cx<R> *a, const Cx<R> *b, int op, double alpha) {
    GRID_LOOP(i, n) {
        int64_t off[3];
        offsets<3>(g, i, off);
        const tn__cplx x = cx_d(ld(g, 1, a, off[1])), y = cx_d(ld(g, 2, b, off[2]));
        const bool nx = x.re != 0 || x.im != 0, ny = y.re != 0 || y.im != 0;
        switch (op) {
        case EQ: ((bool *)o)[off[0]] = x.re == y.re && x.im == y.im; break;
        case NE: ((bool *)o)[off[0]] = x.re != y.re || x.im != y.im; break;
        case LOGICAL_AND: ((bool *)o)[off[0]] = nx && ny; break;
        case LOGICAL_OR: ((bool *)o)[off[0]] = nx || ny; break;
        case LOGICAL_XOR: ((bool *)o)[off[0]] = nx != ny; break;
        default: ((Cx<R> *)o)[off[0]] = cx_r<R>(tn__cbinary(op, x, y, alpha));
        }
    }
}
static int cu_binary_cx(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double alpha) {
    if (!tn__cuda_complex_has(TN__CX_BINARY, op)) return tn__cuda_complex_decline(TN__CX_BINARY, op, a->dtype);
    const char *fn = tn_binary_op_name(op);
    const int64_t n = tn_numel(out);
    if (n == 0) return 0;
    Aligned aa = align_to(a, out->ndim), ab = align_to(b, out->ndim);
    const int64_t *strides[3] = {out->strides, aa.st, ab.st};
    Geo<3> g = make_geo<3>(out->shape, out->ndim, strides);
    tn_tensor *ops[3] = {out, a, b};
    if (mark_host<3>(g, ops, fn)) return -1;
    if (a->dtype == TN_C64) k_binary_cx<float><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, base_of(out), (const c64 *)dev_ptr(a), (const c64 *)dev_ptr(b), (int)op, alpha);
    else k_binary_cx<double><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, base_of(out), (const c128 *)dev_ptr(a), (const c128 *)dev_ptr(b), (int)op, alpha);
    CU_LAUNCHED(fn);
    return 0;
}
static int cu_binary(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double alpha) {
    const char *fn = tn_binary_op_name(op);
    if (tn_dtype_is_complex(a->dtype)) return cu_binary_cx(op, out, a, b, alpha);
    if (!binary_supported(op, a->dtype)) return tn_error("%s: not implemented for dtype %s", fn, tn_dtype_name(a->dtype));
    int64_t n = tn_numel(out);
    if (n == 0) return 0;
    Aligned aa = align_to(a, out->ndim), ab = align_to(b, out->ndim);
    const int64_t *strides[3] = {out->strides, aa.st, ab.st};
    Geo<3> g = make_geo<3>(out->shape, out->ndim, strides);
    tn_tensor *ops[3] = {out, a, b};
    if (mark_host<3>(g, ops, fn)) return -1;
    bool cmp = op == EQ || op == NE || op == LT || op == LE || op == GT || op == GE;
    bool divides = !tn_dtype_is_floating(a->dtype) && (op == FLOOR_DIVIDE || op == REMAINDER || op == FMOD);
    int64_t *bad = NULL;
    if (divides && g.host[2]) { /* a divisor from the host: checked now */
        int64_t v = 0;
        memcpy(&v, &g.hbits[2], tn_dtype_size(b->dtype));
        if ((b->dtype == TN_U8 ? (v & 0xff) : b->dtype == TN_I32 ? (int64_t)(int32_t)v : v) == 0)
            return tn_error("%s: integer division by zero (ZeroDivisionError)", fn);
    } else if (divides) { /* PyTorch raises on integer division by zero: reported at the next synchronisation */
        char msg[160];
        snprintf(msg, sizeof msg, "%s: integer division by zero (ZeroDivisionError)", fn);
        if (!(bad = tn_deferred_check(TN_CUDA, msg))) return -1;
    }
    const bool vec = !cmp && g.contig && !g.scalar[0] && (g.scalar[1] || aligned16(dev_ptr(a))) && (g.scalar[2] || aligned16(dev_ptr(b))) &&
                     aligned16(base_of(out));
    CU_DISPATCH(a->dtype, T, {
        if (cmp) k_compare<T><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (bool *)base_of(out), (const T *)dev_ptr(a), (const T *)dev_ptr(b), (int)op);
        else if (!(vec && launch_binary_vec(n, g, (T *)base_of(out), (const T *)dev_ptr(a), (const T *)dev_ptr(b), (int)op, alpha)))
            k_binary<T><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (T *)base_of(out), (const T *)dev_ptr(a), (const T *)dev_ptr(b), (int)op, alpha, bad);
    })
    CU_LAUNCHED(fn);
    return 0;
}

/* ---- ternary: where, lerp, addcmul, addcdiv ---- */
template <class T, class T1> __global__ void k_ternary(int64_t n, Geo<4> g, T *o, const T1 *x, const T *y, const T *z, int op, double value) {
    const T v = (T)value;
    GRID_LOOP(i, n) {
        int64_t off[4];
        offsets<4>(g, i, off);
        T1 c = ld(g, 1, x, off[1]);
        T a = ld(g, 2, y, off[2]), b = ld(g, 3, z, off[3]);
        T r;
        switch ((tn_ternary_op)op) {
        case WHERE: r = c ? a : b; break;
        case LERP: r = ((double)b < 0.5 && (double)b > -0.5) ? (T)(c + b * (a - c)) : (T)(a - (a - c) * ((T)1 - b)); break; /* |w| < 0.5 */
        case ADDCMUL: r = (T)(c + v * a * b); break;
        default: r = (T)(c + v * a / b); break; /* ADDCDIV */
        }
        o[off[0]] = r;
    }
}
/* complex results: WHERE picks; LERP, ADDCMUL, ADDCDIV by tn__cternary */
template <class R> __global__ void k_ternary_cx(int64_t n, Geo<4> g, Cx<R> *o, const void *x, const Cx<R> *y, const Cx<R> *z, int op, double value) {
    GRID_LOOP(i, n) {
        int64_t off[4];
        offsets<4>(g, i, off);
        if (op == WHERE) o[off[0]] = ld(g, 1, (const bool *)x, off[1]) ? ld(g, 2, y, off[2]) : ld(g, 3, z, off[3]);
        else
            o[off[0]] = cx_r<R>(tn__cternary(op, cx_d(ld(g, 1, (const Cx<R> *)x, off[1])), cx_d(ld(g, 2, y, off[2])), cx_d(ld(g, 3, z, off[3])), value));
    }
}
static int cu_ternary(tn_ternary_op op, tn_tensor *out, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value) {
    const char *fn = "ternary op";
    if (tn_dtype_is_complex(out->dtype) && !tn__cuda_complex_has(TN__CX_TERNARY, op)) return tn__cuda_complex_decline(TN__CX_TERNARY, op, out->dtype);
    bool fl = tn_dtype_is_floating(out->dtype) || tn_dtype_is_complex(out->dtype);
    if ((op == LERP || op == ADDCDIV) && !fl) return tn_error("ternary op %d: not implemented for dtype %s", (int)op, tn_dtype_name(out->dtype));
    int64_t n = tn_numel(out);
    if (n == 0) return 0;
    Aligned ax = align_to(x, out->ndim), ay = align_to(y, out->ndim), az = align_to(z, out->ndim);
    const int64_t *strides[4] = {out->strides, ax.st, ay.st, az.st};
    Geo<4> g = make_geo<4>(out->shape, out->ndim, strides);
    tn_tensor *ops[4] = {out, x, y, z};
    if (mark_host<4>(g, ops, fn)) return -1;
    if (out->dtype == TN_C64 || out->dtype == TN_C128) {
        if (out->dtype == TN_C64) k_ternary_cx<float><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (c64 *)base_of(out), dev_ptr(x), (const c64 *)dev_ptr(y), (const c64 *)dev_ptr(z), (int)op, value);
        else k_ternary_cx<double><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (c128 *)base_of(out), dev_ptr(x), (const c128 *)dev_ptr(y), (const c128 *)dev_ptr(z), (int)op, value);
        CU_LAUNCHED(fn);
        return 0;
    }
    CU_DISPATCH(out->dtype, T, {
        if (op == WHERE)
            k_ternary<T, bool><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (T *)base_of(out), (const bool *)dev_ptr(x), (const T *)dev_ptr(y), (const T *)dev_ptr(z), (int)op, value);
        else
            k_ternary<T, T><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (T *)base_of(out), (const T *)dev_ptr(x), (const T *)dev_ptr(y), (const T *)dev_ptr(z), (int)op, value);
    })
    CU_LAUNCHED(fn);
    return 0;
}

/* ---- fused elementwise chains (tn_backend.fused_elementwise) ----
   A graph replay's chain of unary and binary members (src/jit/trace.c plans it) in one
   kernel: each thread loads its element's outside operands once, applies the members in
   registers through the unary and binary kernels' own UnaryVal / BinaryVal (no second copy
   of any op's math: the bits of the members run one by one, which store each result in
   the same dtype) and stores once: one launch and no intermediate tensor per member.
   Geo<N> for the output and up to N - 1 operands: N is 3, 6 or TN__FUSED_EXT + 1, the
   fewest that hold the chain's (each operand costs index arithmetic per element). */
struct FusedPtrs { const void *p[TN__FUSED_EXT]; };
template <class T, int N> __global__ void k_fused(int64_t n, int next, Geo<N> g, T *o, FusedPtrs ptr, tn__fused_prog prog) {
    GRID_LOOP(i, n) {
        int64_t off[N];
        offsets<N>(g, i, off);
        T x[N - 1];
#pragma unroll
        for (int k = 0; k < N - 1; k++) x[k] = k < next ? ld(g, 1 + k, (const T *)ptr.p[k], off[1 + k]) : (T)0;
        T r = (T)0;
        for (int j = 0; j < prog.n; j++) {
            const tn__fused_op &m = prog.m[j];
            const T a = m.src[0] < 0 ? r : x[m.src[0]];
            if (m.binary) {
                int bad = 0;   /* integer division only: never set for float */
                r = BinaryVal<T>::f(m.op, a, m.src[1] < 0 ? r : x[m.src[1]], m.params[0], &bad);
            } else {
                UnaryArgs u;
                u.op = m.op;
                u.p0 = m.params[0];
                u.p1 = m.params[1];
                u.p2 = m.params[2];
                r = UnaryVal<T>::f(u, a);
            }
        }
        o[off[0]] = r;
    }
}
/* its parameters (the program by value: nothing of the host's outlives the launch) within
   the classic 4 KiB kernel-parameter limit (32 KiB only from CUDA 12.1 on Volta and later) */
static_assert(sizeof(int64_t) + sizeof(int) + sizeof(Geo<TN__FUSED_EXT + 1>) + sizeof(double *) + sizeof(FusedPtrs) + sizeof(tn__fused_prog) + 64 <= 4096,
              "k_fused's parameters past 4 KiB");
template <int N> static int launch_fused(int64_t n, tn_tensor *out, tn_tensor *const *ext, int next, const tn__fused_prog *prog) {
    const char *fn = "fused_elementwise";
    Aligned al[N];
    const int64_t *strides[N];
    tn_tensor *ops[N];
    FusedPtrs ptr;
    memset(&ptr, 0, sizeof ptr);
    strides[0] = out->strides;
    ops[0] = out;
    for (int k = 1; k < N; k++) {   /* the unused operands: none, stride 0 */
        const bool used = k - 1 < next;
        if (used) al[k] = align_to(ext[k - 1], out->ndim);
        else memset(&al[k], 0, sizeof al[k]);
        strides[k] = al[k].st;
        ops[k] = used ? ext[k - 1] : NULL;
        if (used) ptr.p[k - 1] = dev_ptr(ext[k - 1]);
    }
    Geo<N> g = make_geo<N>(out->shape, out->ndim, strides);
    if (mark_host<N>(g, ops, fn)) return -1;
    if (out->dtype == TN_F32) k_fused<float, N><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, next, g, (float *)base_of(out), ptr, *prog);
    else k_fused<double, N><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, next, g, (double *)base_of(out), ptr, *prog);
    CU_LAUNCHED(fn);
    return 0;
}
static int cu_fused_elementwise(tn_tensor *out, tn_tensor *const *ext, int next, const tn__fused_prog *prog) {
    const char *off_ = getenv("TN_CUDA_FUSED_ELEMENTWISE");
    if (tn__fused_declines(off_ && !strcmp(off_, "0"), out->dtype, next, prog)) return 1;   /* the stand-in's cases too (src/api.h) */
    for (int e = 0; e < next; e++)
        if (!ext[e] || ext[e]->dtype != out->dtype)
            return tn_error("fused_elementwise: operand %d is %s, the result %s", e, ext[e] ? tn_dtype_name(ext[e]->dtype) : "missing", tn_dtype_name(out->dtype));
    const int64_t n = tn_numel(out);
    if (n == 0) return 0;
    if (next + 1 <= 3) return launch_fused<3>(n, out, ext, next, prog);
    if (next + 1 <= 6) return launch_fused<6>(n, out, ext, next, prog);
    return launch_fused<TN__FUSED_EXT + 1>(n, out, ext, next, prog);
}

/* ======================================================================= */
/* 5. reductions, lane ops, layer norm, cross-entropy                      */
/* ======================================================================= */
/* Accumulators: double for float types (as the CPU's float32 sums), int64 for the
   integer and bool types, with sums and products wrapping through uint64. */
template <class T> struct Acc { typedef int64_t type; };
template <> struct Acc<float> { typedef double type; };
template <> struct Acc<double> { typedef double type; };
template <class A> __device__ __forceinline__ A combine(int op, A acc, A x) {
    switch ((tn_reduce_op)op) {
    case SUM: return IsFloat<A>::v ? acc + x : (A)((uint64_t)acc + (uint64_t)x);
    case PROD: return IsFloat<A>::v ? acc * x : (A)((uint64_t)acc * (uint64_t)x);
    case MAX: return (x != x || x > acc) ? x : acc;
    case MIN: return (x != x || x < acc) ? x : acc;
    case ALL: return (A)(acc != 0 && x != 0);
    default: return (A)(acc != 0 || x != 0); /* ANY */
    }
}
template <class T, class A> __device__ __forceinline__ T store_acc(A a) {
    return IsFloat<T>::v ? (T)a : convert<T>((int64_t)a);
}
/* one thread per output: few reduced elements per output */
template <class T> __global__ void k_reduce_thread(int64_t m, int64_t r, Geo<2> go, Geo<1> gr, T *out, const T *x, int op) {
    typedef typename Acc<T>::type A;
    GRID_LOOP(j, m) {
        int64_t o[2];
        offsets<2>(go, j, o);
        A acc = (A)out[o[0]];
        for (int64_t k = 0; k < r; k++) {
            int64_t q[1];
            offsets<1>(gr, k, q);
            acc = combine<A>(op, acc, (A)x[o[1] + q[0]]);
        }
        out[o[0]] = store_acc<T, A>(acc);
    }
}
/* one block per output: threads stride over the reduced elements, then a tree */
template <class T> __global__ void k_reduce_block(int64_t m, int64_t r, Geo<2> go, Geo<1> gr, T *out, const T *x, int op) {
    typedef typename Acc<T>::type A;
    __shared__ A part[kThreads];
    for (int64_t j = blockIdx.x; j < m; j += gridDim.x) {
        int64_t o[2];
        offsets<2>(go, j, o);
        bool have = false;
        A acc = 0;
        for (int64_t k = threadIdx.x; k < r; k += blockDim.x) {
            int64_t q[1];
            offsets<1>(gr, k, q);
            A v = (A)x[o[1] + q[0]];
            acc = have ? combine<A>(op, acc, v) : v;
            have = true;
        }
        part[threadIdx.x] = have ? acc : (A)out[o[0]]; /* a thread with nothing repeats the start value: harmless for */
        __syncthreads();                                /* max/min/all/any; sum/prod use the identity below */
        if (!have && (op == SUM || op == PROD)) part[threadIdx.x] = op == SUM ? (A)0 : (A)1;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s) part[threadIdx.x] = combine<A>(op, part[threadIdx.x], part[threadIdx.x + s]);
            __syncthreads();
        }
        if (threadIdx.x == 0) out[o[0]] = store_acc<T, A>(combine<A>(op, (A)out[o[0]], part[0]));
        __syncthreads();
    }
}
/* Outputs side by side in memory, each reduced down a column (a bias gradient: [rows, C]
   to [C]): a warp takes 32 neighbouring outputs, so that its loads are consecutive, and 8
   warps split each column; with few outputs the columns split again across blocks (grid y)
   into partials that k_reduce_fold folds in order (splits is 1 otherwise). */
enum { kColY = 8 };
template <class T> __global__ void k_reduce_cols(int64_t m, int64_t r, int64_t per, Geo<2> go, Geo<1> gr, T *out, const T *x, int op,
                                                 typename Acc<T>::type *part) {
    typedef typename Acc<T>::type A;
    __shared__ A sh[kColY][32];
    __shared__ bool shv[kColY][32];
    const int64_t j = (int64_t)blockIdx.x * 32 + threadIdx.x, k0 = (int64_t)blockIdx.y * per, k1 = k0 + per < r ? k0 + per : r;
    int64_t o[2] = {0, 0};
    bool have = false;
    A acc = 0;
    if (j < m) {
        offsets<2>(go, j, o);
        for (int64_t k = k0 + threadIdx.y; k < k1; k += kColY) {
            int64_t q[1];
            offsets<1>(gr, k, q);
            A v = (A)x[o[1] + q[0]];
            acc = have ? combine<A>(op, acc, v) : v;
            have = true;
        }
    }
    sh[threadIdx.y][threadIdx.x] = acc;
    shv[threadIdx.y][threadIdx.x] = have;
    __syncthreads();
    if (threadIdx.y != 0 || j >= m) return;
    for (int t = 1; t < kColY; t++)   /* row 0 holds k0's element: every split has one */
        if (shv[t][threadIdx.x]) acc = combine<A>(op, acc, sh[t][threadIdx.x]);
    if (part) part[j * gridDim.y + blockIdx.y] = acc;
    else out[o[0]] = store_acc<T, A>(combine<A>(op, (A)out[o[0]], acc));
}
/* Few outputs, many elements each (a full sum): blocks take chunks of one output's
   elements and leave partials; a second kernel folds each output's partials in order,
   so the result does not depend on timing. */
template <class T> __global__ void k_reduce_chunks(int64_t chunks, int64_t clen, int64_t r, Geo<2> go, Geo<1> gr, const T *x, int op,
                                                   typename Acc<T>::type *part) {
    typedef typename Acc<T>::type A;
    __shared__ A sh[kThreads];
    __shared__ bool shv[kThreads];
    int64_t j = blockIdx.x / chunks, c = blockIdx.x % chunks, k0 = c * clen, k1 = k0 + clen < r ? k0 + clen : r;
    int64_t o[2];
    offsets<2>(go, j, o);
    bool have = false;
    A acc = 0;
    for (int64_t k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
        int64_t q[1];
        offsets<1>(gr, k, q);
        A v = (A)x[o[1] + q[0]];
        acc = have ? combine<A>(op, acc, v) : v;
        have = true;
    }
    sh[threadIdx.x] = acc;
    shv[threadIdx.x] = have;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s && shv[threadIdx.x + s]) {
            sh[threadIdx.x] = shv[threadIdx.x] ? combine<A>(op, sh[threadIdx.x], sh[threadIdx.x + s]) : sh[threadIdx.x + s];
            shv[threadIdx.x] = true;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0]; /* every chunk has at least one element */
}
template <class T> __global__ void k_reduce_fold(int64_t m, int64_t chunks, Geo<2> go, T *out, const typename Acc<T>::type *part, int op) {
    typedef typename Acc<T>::type A;
    GRID_LOOP(j, m) {
        int64_t o[2];
        offsets<2>(go, j, o);
        A acc = (A)out[o[0]];
        for (int64_t c = 0; c < chunks; c++) acc = combine<A>(op, acc, part[j * chunks + c]);
        out[o[0]] = store_acc<T, A>(acc);
    }
}

/* complex SUM and PROD, accumulated in double as the CPU's (tn__cplx): a thread per output
   when few elements reduce into each, else a block per output and a tree */
__device__ __forceinline__ tn__cplx cx_combine(int op, tn__cplx a, tn__cplx b) { return op == SUM ? tn__cadd(a, b) : tn__cmul(a, b); }
template <class R> __global__ void k_reduce_cx(int64_t m, int64_t r, Geo<2> go, Geo<1> gr, Cx<R> *out, const Cx<R> *x, int op, bool per_thread) {
    __shared__ tn__cplx part[kThreads];
    const int64_t step = per_thread ? (int64_t)gridDim.x * blockDim.x : gridDim.x;
    for (int64_t j0 = per_thread ? (int64_t)blockIdx.x * blockDim.x : blockIdx.x; j0 < m; j0 += step) {   /* the same trips for a whole block */
        const int64_t j = per_thread ? j0 + threadIdx.x : j0;
        int64_t o[2] = {0, 0};
        if (j < m) offsets<2>(go, j, o);
        tn__cplx acc = op == SUM ? tn__cx(0, 0) : tn__cx(1, 0);
        if (j < m)
            for (int64_t k = per_thread ? 0 : threadIdx.x; k < r; k += per_thread ? 1 : blockDim.x) {
                int64_t q[1];
                offsets<1>(gr, k, q);
                acc = cx_combine(op, acc, cx_d(x[o[1] + q[0]]));
            }
        if (per_thread) {
            if (j < m) out[o[0]] = cx_r<R>(cx_combine(op, cx_d(out[o[0]]), acc));
            continue;
        }
        part[threadIdx.x] = acc;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s) part[threadIdx.x] = cx_combine(op, part[threadIdx.x], part[threadIdx.x + s]);
            __syncthreads();
        }
        if (threadIdx.x == 0) out[o[0]] = cx_r<R>(cx_combine(op, cx_d(out[o[0]]), part[0]));
        __syncthreads();
    }
}
static int cu_reduce(tn_reduce_op op, tn_tensor *out, tn_tensor *x) {
    const char *fn = "reduce";
    if (tn_dtype_is_complex(x->dtype) && !tn__cuda_complex_has(TN__CX_REDUCE, op)) return tn__cuda_complex_decline(TN__CX_REDUCE, op, x->dtype);
    if (out->dtype != x->dtype) return tn_error("reduce: dtype %s is not supported by the GPU unit", tn_dtype_name(x->dtype));
    int64_t m = tn_numel(out), r = 1, kshape[TN_MAX_DIMS], kx[TN_MAX_DIMS], ko[TN_MAX_DIMS], rshape[TN_MAX_DIMS], rx[TN_MAX_DIMS];
    int nk = 0, nr = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (out->shape[d] == x->shape[d]) { kshape[nk] = x->shape[d]; kx[nk] = x->strides[d]; ko[nk] = out->strides[d]; nk++; }
        else { rshape[nr] = x->shape[d]; rx[nr] = x->strides[d]; r *= x->shape[d]; nr++; }
    }
    if (m == 0 || r == 0) return 0;
    const int64_t *so[2] = {ko, kx}, *sr[1] = {rx};
    Geo<2> go = make_geo<2>(kshape, nk, so);
    Geo<1> gr = make_geo<1>(rshape, nr, sr);
    const int64_t clen = 16384; /* elements per block in the two-pass path */
    int64_t chunks = (r + clen - 1) / clen;
    Scratch sc;
    if (tn_dtype_is_complex(x->dtype)) {
        const bool per_thread = r < 64 && m > 1;
        const unsigned blocks = per_thread ? blocks_for(m) : (unsigned)(m < 65535 ? m : 65535);
        if (x->dtype == TN_C64) k_reduce_cx<float><<<blocks, kThreads, 0, cu_stream()>>>(m, r, go, gr, (c64 *)base_of(out), (const c64 *)base_of(x), (int)op, per_thread);
        else k_reduce_cx<double><<<blocks, kThreads, 0, cu_stream()>>>(m, r, go, gr, (c128 *)base_of(out), (const c128 *)base_of(x), (int)op, per_thread);
        CU_LAUNCHED(fn);
        return 0;
    }
    CU_DISPATCH(x->dtype, T, {
        if (r < 64 && m > 1) k_reduce_thread<T><<<blocks_for(m), kThreads, 0, cu_stream()>>>(m, r, go, gr, (T *)base_of(out), (const T *)base_of(x), (int)op);
        else if (m >= 32 && m / 32 < INT32_MAX && go.nd >= 1 && go.st[1][go.nd - 1] == 1) {   /* columns: see k_reduce_cols */
            typedef typename Acc<T>::type A;
            const int64_t tiles = (m + 31) / 32, most = (r + 63) / 64;   /* at least 64 elements per split */
            int64_t splits = 1024 / tiles < most ? 1024 / tiles : most;
            if (splits < 1) splits = 1;
            const int64_t per = (r + splits - 1) / splits;
            splits = (r + per - 1) / per;   /* none empty */
            A *part = NULL;
            if (splits > 1 && !(part = (A *)sc.get((size_t)(m * splits) * sizeof(A)))) return -1;
            k_reduce_cols<T><<<dim3((unsigned)tiles, (unsigned)splits), dim3(32, kColY), 0, cu_stream()>>>(m, r, per, go, gr, (T *)base_of(out), (const T *)base_of(x), (int)op, part);
            if (part) k_reduce_fold<T><<<blocks_for(m), kThreads, 0, cu_stream()>>>(m, splits, go, (T *)base_of(out), part, (int)op);
        } else if (m < 64 && chunks > 1 && m * chunks <= 65535) {
            typedef typename Acc<T>::type A;
            A *part = (A *)sc.get((size_t)(m * chunks) * sizeof(A));
            if (!part) return -1;
            k_reduce_chunks<T><<<(unsigned)(m * chunks), kThreads, 0, cu_stream()>>>(chunks, clen, r, go, gr, (const T *)base_of(x), (int)op, part);
            k_reduce_fold<T><<<blocks_for(m), kThreads, 0, cu_stream()>>>(m, chunks, go, (T *)base_of(out), part, (int)op);
        } else k_reduce_block<T><<<(unsigned)(m < 65535 ? m : 65535), kThreads, 0, cu_stream()>>>(m, r, go, gr, (T *)base_of(out), (const T *)base_of(x), (int)op);
    })
    CU_LAUNCHED(fn);
    return 0;
}

/* ---- lane ops: along one dim ---- */
struct LaneArgs { int op, flag; int64_t len, so, so1, sx; }; /* strides in elements */
template <class T> __device__ __forceinline__ bool lane_lt(T x, T y) { return x == x && (y != y || x < y); } /* NaN largest */
template <class T> __device__ __forceinline__ bool lane_gt(T x, T y) { return (x != x && y == y) || x > y; }
/* one thread per lane: arg-extremes, scans, sort (a bottom-up stable merge sort in scratch) */
template <class T> __global__ void k_lane(int64_t lanes, Geo<3> g, T *out, int64_t *out1, const T *x, LaneArgs a, T *vals, int64_t *ix, int64_t *tmp) {
    GRID_LOOP(l, lanes) {
        int64_t off[3];
        offsets<3>(g, l, off);
        const T *xp = x + off[2];
        const int64_t len = a.len;
        if (a.op == ARGMAX || a.op == ARGMIN) {
            T best = xp[0];
            int64_t bi = 0;
            for (int64_t i = 1; i < len && best == best; i++) {
                T v = xp[i * a.sx];
                if (v != v || (a.op == ARGMAX ? v > best : v < best)) { best = v; bi = i; }
            }
            if (a.flag) out[off[0]] = best;
            out1[off[1]] = bi;
        } else if (a.op == CUMMAX || a.op == CUMMIN) { /* as the CPU: a NaN, or a value at least as large (small), takes over */
            T best = xp[0];
            int64_t bi = 0;
            for (int64_t i = 0; i < len; i++) {
                T v = xp[i * a.sx];
                if (v != v || (best == best && (a.op == CUMMAX ? v >= best : v <= best))) { best = v; bi = i; }
                out[off[0] + i * a.so] = best;
                out1[off[1] + i * a.so1] = bi;
            }
        } else if (a.op == LOGCUMSUMEXP) { /* in double, PyTorch's log-add-exp (float lanes only reach here) */
            double acc = -INFINITY;
            for (int64_t i = 0; i < len; i++) {
                double x = (double)xp[i * a.sx], lo = acc != acc ? acc : (acc < x ? acc : x), hi = acc != acc ? acc : (x < acc ? acc : x);
                acc = (lo != hi || isfinite(lo)) ? hi + log1p(exp(lo - hi)) : x;
                out[off[0] + i * a.so] = (T)acc;
            }
        } else if (a.op == CUMSUM || a.op == CUMPROD) {
            typedef typename Acc<T>::type A;
            A acc = a.op == CUMSUM ? (A)0 : (A)1;
            for (int64_t i = 0; i < len; i++) {
                A v = (A)xp[i * a.sx];
                acc = combine<A>(a.op == CUMSUM ? SUM : PROD, acc, v);
                out[off[0] + i * a.so] = store_acc<T, A>(acc);
            }
        } else { /* SORT */
            T *v = vals + l * len;
            int64_t *p = ix + l * len, *q = tmp + l * len;
            for (int64_t i = 0; i < len; i++) { v[i] = xp[i * a.sx]; p[i] = i; }
            for (int64_t w = 1; w < len; w *= 2) {
                for (int64_t lo = 0; lo < len; lo += 2 * w) {
                    int64_t mid = lo + w < len ? lo + w : len, hi = lo + 2 * w < len ? lo + 2 * w : len, i = lo, j = mid, k = lo;
                    while (i < mid && j < hi) {
                        bool right = a.flag ? lane_gt(v[p[j]], v[p[i]]) : lane_lt(v[p[j]], v[p[i]]);
                        q[k++] = right ? p[j++] : p[i++];
                    }
                    while (i < mid) q[k++] = p[i++];
                    while (j < hi) q[k++] = p[j++];
                }
                int64_t *t = p; p = q; q = t;
            }
            for (int64_t i = 0; i < len; i++) { out[off[0] + i * a.so] = v[p[i]]; out1[off[1] + i * a.so1] = p[i]; }
        }
    }
}
/* Sorting lanes of up to kSortMax: one block per lane, a bitonic sort of (value, index)
   pairs in shared memory. Equal values order by index, so the result is the stable merge
   sort's (and the CPU's); NaN sorts as the largest; padding slots (index >= len) go last. */
constexpr int kSortMax = 2048;
template <class T> __device__ __forceinline__ bool sort_before(bool desc, T a, int ia, T b, int ib, int len) {
    if (ia >= len || ib >= len) return ia < ib;
    if (desc ? lane_gt(a, b) : lane_lt(a, b)) return true;
    if (desc ? lane_gt(b, a) : lane_lt(b, a)) return false;
    return ia < ib;
}
template <class T> __global__ void k_sort_block(int64_t lanes, Geo<3> g, T *out, int64_t *out1, const T *x, LaneArgs a) {
    __shared__ T sv[kSortMax];
    __shared__ int si[kSortMax];
    const int len = (int)a.len;
    int P = 1;
    while (P < len) P <<= 1;
    for (int64_t l = blockIdx.x; l < lanes; l += gridDim.x) {
        int64_t off[3];
        offsets<3>(g, l, off);
        const T *xp = x + off[2];
        for (int i = threadIdx.x; i < P; i += blockDim.x) { si[i] = i; sv[i] = i < len ? xp[i * a.sx] : (T)0; }
        __syncthreads();
        for (int k = 2; k <= P; k <<= 1)
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int t = threadIdx.x; t < P; t += blockDim.x) {
                    const int u = t ^ j;
                    if (u <= t) continue;
                    const T vt = sv[t], vu = sv[u];
                    const int it = si[t], iu = si[u];
                    const bool swap = (t & k) == 0 ? sort_before(a.flag != 0, vu, iu, vt, it, len) : sort_before(a.flag != 0, vt, it, vu, iu, len);
                    if (swap) { sv[t] = vu; sv[u] = vt; si[t] = iu; si[u] = it; }
                }
                __syncthreads();
            }
        for (int i = threadIdx.x; i < len; i += blockDim.x) { out[off[0] + i * a.so] = sv[i]; out1[off[1] + i * a.so1] = si[i]; }
        __syncthreads();   /* before the next lane overwrites the shared arrays */
    }
}
/* Long lanes (an argmax over a whole tensor): one block per lane. The CPU's answer is the
   first NaN if there is one, else the first extreme: (value, index) pairs compare so. */
template <class T> __device__ __forceinline__ bool arg_better(bool is_max, T a, int64_t ia, T b, int64_t ib) {
    bool an = a != a, bn = b != b;
    if (an || bn) return an && (!bn || ia < ib);
    if (a != b) return is_max ? a > b : a < b;
    return ia < ib;
}
template <class T> __global__ void k_argext_block(int64_t lanes, Geo<3> g, T *out, int64_t *out1, const T *x, LaneArgs a) {
    __shared__ T sv[kThreads];
    __shared__ int64_t si[kThreads];
    const bool is_max = a.op == ARGMAX;
    for (int64_t l = blockIdx.x; l < lanes; l += gridDim.x) {
        int64_t off[3];
        offsets<3>(g, l, off);
        const T *xp = x + off[2];
        int64_t bi = -1;
        T bv = 0;
        for (int64_t i = threadIdx.x; i < a.len; i += blockDim.x) {
            T v = xp[i * a.sx];
            if (bi < 0 || arg_better(is_max, v, i, bv, bi)) { bv = v; bi = i; }
        }
        sv[threadIdx.x] = bv;
        si[threadIdx.x] = bi;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s && si[threadIdx.x + s] >= 0 &&
                (si[threadIdx.x] < 0 || arg_better(is_max, sv[threadIdx.x + s], si[threadIdx.x + s], sv[threadIdx.x], si[threadIdx.x]))) {
                sv[threadIdx.x] = sv[threadIdx.x + s];
                si[threadIdx.x] = si[threadIdx.x + s];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            if (a.flag) out[off[0]] = sv[0];
            out1[off[1]] = si[0];
        }
        __syncthreads();
    }
}
/* one warp per lane: softmax and log_softmax (sum of exponentials in double) */
template <class T> __global__ void k_softmax(int64_t lanes, Geo<3> g, T *out, const T *x, LaneArgs a) {
    const int lane = threadIdx.x & 31;
    for (int64_t l = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; l < lanes; l += (int64_t)gridDim.x * blockDim.x / 32) {
        int64_t off[3];
        offsets<3>(g, l, off);
        const T *xp = x + off[2];
        T m = -(T)INFINITY;
        for (int64_t i = lane; i < a.len; i += 32) { T v = xp[i * a.sx]; m = (v != v || v > m) ? v : m; }
        for (int s = 16; s > 0; s >>= 1) { T v = __shfl_xor_sync(0xffffffffu, m, s); m = (v != v || v > m) ? v : m; }
        double sum = 0;
        for (int64_t i = lane; i < a.len; i += 32) sum += (double)m_exp(xp[i * a.sx] - m);
        for (int s = 16; s > 0; s >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, s);
        T *op = out + off[0];
        if (a.op == SOFTMAX) {
            T inv = (T)(1.0 / sum);
            for (int64_t i = lane; i < a.len; i += 32) op[i * a.so] = m_exp(xp[i * a.sx] - m) * inv;
        } else {
            T ls = (T)log(sum);
            for (int64_t i = lane; i < a.len; i += 32) op[i * a.so] = (xp[i * a.sx] - m) - ls;
        }
    }
}
template <class T> struct SoftmaxLaunch { /* integer lanes never get here */
    static void run(int64_t, const Geo<3> &, T *, const T *, const LaneArgs &) {}
};
template <> struct SoftmaxLaunch<float> {
    static void run(int64_t lanes, const Geo<3> &g, float *o, const float *x, const LaneArgs &a) { k_softmax<float><<<blocks_for(lanes * 32), kThreads, 0, cu_stream()>>>(lanes, g, o, x, a); }
};
template <> struct SoftmaxLaunch<double> {
    static void run(int64_t lanes, const Geo<3> &g, double *o, const double *x, const LaneArgs &a) { k_softmax<double><<<blocks_for(lanes * 32), kThreads, 0, cu_stream()>>>(lanes, g, o, x, a); }
};
/* complex CUMPROD (prod's gradient takes it): a thread per lane, accumulated in double as the
   CPU's (complex128, ATen's acc_type) */
template <class R> __global__ void k_cumprod_cx(int64_t lanes, Geo<3> g, Cx<R> *out, const Cx<R> *x, LaneArgs a) {
    GRID_LOOP(l, lanes) {
        int64_t off[3];
        offsets<3>(g, l, off);
        tn__cplx acc = tn__cx(1, 0);
        for (int64_t k = 0; k < a.len; k++) {
            acc = tn__cmul(acc, cx_d(x[off[2] + k * a.sx]));
            out[off[0] + k * a.so] = cx_r<R>(acc);
        }
    }
}
static int cu_lane(tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t dim, int flag) {
    const char *fn = "lane op";
    if (tn_dtype_is_complex(x->dtype) && !tn__cuda_complex_has(TN__CX_LANE, op)) return tn__cuda_complex_decline(TN__CX_LANE, op, x->dtype);
    tn_tensor xv = *x;
    if (x->ndim == 0) { xv.ndim = 1; xv.shape[0] = 1; xv.strides[0] = 1; dim = 0; }
    tn_tensor *o = out ? out : out1, *o1 = out1 ? out1 : out;
    tn_tensor ov = *o, o1v = *o1;
    if (ov.ndim == 0) { ov.ndim = 1; ov.shape[0] = 1; ov.strides[0] = 1; }
    if (o1v.ndim == 0) { o1v.ndim = 1; o1v.shape[0] = 1; o1v.strides[0] = 1; }
    LaneArgs a;
    a.op = op;
    a.flag = (op == ARGMAX || op == ARGMIN) ? out != NULL : flag;
    a.len = xv.shape[dim];
    a.sx = xv.strides[dim];
    a.so = ov.strides[dim];
    a.so1 = o1v.strides[dim];
    int64_t shape[TN_MAX_DIMS] = {0};
    for (int d = 0; d < xv.ndim; d++) shape[d] = d == dim ? 1 : xv.shape[d];
    const int64_t *strides[3] = {ov.strides, o1v.strides, xv.strides};
    Geo<3> g = make_geo<3>(shape, xv.ndim, strides);
    int64_t lanes = 1;
    for (int d = 0; d < xv.ndim; d++) lanes *= shape[d];
    if (lanes == 0 || a.len == 0) return 0;
    if ((op == SOFTMAX || op == LOG_SOFTMAX || op == LOGCUMSUMEXP) && !tn_dtype_is_floating(x->dtype)) return tn_error("lane op: dtype %s is not supported", tn_dtype_name(x->dtype));
    if (x->dtype == TN_C64) k_cumprod_cx<float><<<blocks_for(lanes), kThreads, 0, cu_stream()>>>(lanes, g, (c64 *)base_of(o), (const c64 *)base_of(x), a);
    if (x->dtype == TN_C128) k_cumprod_cx<double><<<blocks_for(lanes), kThreads, 0, cu_stream()>>>(lanes, g, (c128 *)base_of(o), (const c128 *)base_of(x), a);
    if (tn_dtype_is_complex(x->dtype)) {
        CU_LAUNCHED(fn);
        return 0;
    }
    Scratch sc;
    tn_dtype d = x->dtype == TN_BOOL ? TN_U8 : x->dtype; /* bool lanes run as uint8, as on the CPU */
    switch (d) {
    case TN_F32: case TN_F64: case TN_I32: case TN_I64: case TN_U8: break;
    default: return tn_error("lane op: dtype %s is not supported by the GPU unit", tn_dtype_name(x->dtype));
    }
    CU_DISPATCH(d, T, {
        if (op == SOFTMAX || op == LOG_SOFTMAX) {
            SoftmaxLaunch<T>::run(lanes, g, (T *)base_of(o), (const T *)base_of(x), a);
        } else {
            T *vals = NULL;
            int64_t *ix = NULL, *tmp = NULL;
            const bool block_sort = op == SORT && a.len <= kSortMax;
            if (op == SORT && !block_sort) {
                vals = (T *)sc.get((size_t)(lanes * a.len) * sizeof(T));
                ix = (int64_t *)sc.get((size_t)(lanes * a.len) * sizeof(int64_t));
                tmp = (int64_t *)sc.get((size_t)(lanes * a.len) * sizeof(int64_t));
                if (!vals || !ix || !tmp) return -1;
            }
            if (block_sort) {   /* a thread per compared pair, at least a warp */
                int P = 1;
                while (P < a.len) P <<= 1;
                const unsigned threads = P / 2 < 32 ? 32 : P / 2 > kThreads ? kThreads : P / 2;
                k_sort_block<T><<<(unsigned)(lanes < (1 << 20) ? lanes : (1 << 20)), threads, 0, cu_stream()>>>(lanes, g, (T *)base_of(o), (int64_t *)base_of(o1), (const T *)base_of(x), a);
            }
            else if ((op == ARGMAX || op == ARGMIN) && a.len >= 2048 && lanes < 4096)
                k_argext_block<T><<<(unsigned)lanes, kThreads, 0, cu_stream()>>>(lanes, g, (T *)base_of(o), (int64_t *)base_of(o1), (const T *)base_of(x), a);
            else
                k_lane<T><<<blocks_for(lanes), kThreads, 0, cu_stream()>>>(lanes, g, (T *)base_of(o), (int64_t *)base_of(o1), (const T *)base_of(x), a, vals, ix, tmp);
        }
    })
    CU_LAUNCHED(fn);
    return 0;
}

/* The operands of a library entry (NULL where unused) are contiguous and, with like, of
   like's dtype: else the entry declines. */
static bool dense(tn_tensor *const *ts, int n, const tn_tensor *like) {
    for (int k = 0; k < n; k++)
        if (ts[k] && (!tn_is_contiguous(ts[k]) || (like && ts[k]->dtype != like->dtype))) return false;
    return true;
}

/* ---- layer norm and cross-entropy: a warp per row, statistics in double as on the CPU;
   layer norm's weight and bias gradients are column sums: chunks of rows, then a fold ---- */
__device__ __forceinline__ double warp_sum(double v) {
    for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffffu, v, s);
    return v;
}
#define ROW_LOOP(r, M) for (int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < (M); r += (int64_t)gridDim.x * blockDim.x / 32)
template <class T> __global__ void k_ln_fwd(int64_t M, int64_t D, const T *x, T *y, const T *w, const T *b, double *st, double eps) {
    const int lane = threadIdx.x & 31;
    ROW_LOOP(r, M) {   /* every lane of a warp has the same row: the shuffles see the whole warp */
        const T *xp = x + r * D;
        double s = 0, q = 0;
        for (int64_t i = lane; i < D; i += 32) s += (double)xp[i];
        const double mean = warp_sum(s) / (double)D;
        for (int64_t i = lane; i < D; i += 32) { double d = (double)xp[i] - mean; q += d * d; }
        const double is = 1 / sqrt(warp_sum(q) / (double)D + eps);
        if (lane == 0) { st[r] = mean; st[M + r] = is; }
        const T m = (T)mean, sc = (T)is;
        T *yp = y + r * D;
        for (int64_t i = lane; i < D; i += 32) yp[i] = w ? (xp[i] - m) * sc * w[i] + b[i] : (xp[i] - m) * sc;
    }
}
template <class T> __global__ void k_ln_bwd_x(int64_t M, int64_t D, const T *x, const T *gy, const T *w, const double *st, T *gx) {
    const int lane = threadIdx.x & 31;
    ROW_LOOP(r, M) {
        const T *xp = x + r * D, *gp = gy + r * D;
        const double m = st[r], is = st[M + r];
        double sg = 0, sp = 0;
        for (int64_t i = lane; i < D; i += 32) { double g = (double)gp[i] * (w ? (double)w[i] : 1.0); sg += g; sp += g * ((double)xp[i] - m); }
        const double a = warp_sum(sg) / (double)D, c = warp_sum(sp) * is * is / (double)D;
        T *op = gx + r * D;
        for (int64_t i = lane; i < D; i += 32) op[i] = (T)(is * ((double)gp[i] * (w ? (double)w[i] : 1.0) - a - ((double)xp[i] - m) * c));
    }
}
/* cross-entropy rows (tn_backend.cross_entropy): the max (NaN wins), the sum of
   exponentials in double, lse = max + log(sum); the backward's softmax from lse */
template <class T> __global__ void k_ce_rows(int mode, int64_t N, int64_t C, const T *x, const int64_t *t, const T *wr, double *lse, T *out, T *gx) {
    const int lane = threadIdx.x & 31;
    ROW_LOOP(i, N) {
        const T *xp = x + i * C;
        if (mode == 0) {
            T m = -(T)INFINITY;
            for (int64_t c = lane; c < C; c += 32) { T v = xp[c]; m = (v != v || v > m) ? v : m; }
            for (int s = 16; s > 0; s >>= 1) { T v = __shfl_xor_sync(0xffffffffu, m, s); m = (v != v || v > m) ? v : m; }
            double s = 0;
            for (int64_t c = lane; c < C; c += 32) s += (double)m_exp(xp[c] - m);
            s = warp_sum(s);
            if (lane == 0) {
                const double l = (double)m + log(s);
                lse[i] = l;
                out[i] = wr[i] == 0 ? (T)0 : (T)((double)wr[i] * (l - (double)xp[t[i]]));
            }
        } else {
            const double g = (double)out[i] * (double)wr[i], l = lse[i];
            const int64_t ti = t[i];
            T *op = gx + i * C;
            for (int64_t c = lane; c < C; c += 32) op[c] = (T)(g * (exp((double)xp[c] - l) - (c == ti ? 1.0 : 0.0)));
        }
    }
}
#undef ROW_LOOP
/* part [chunks][2][D]: sums of gy * xhat and of gy over each chunk of rows */
template <class T> __global__ void k_ln_bwd_w(int64_t M, int64_t D, int64_t chunks, int64_t rows, const T *x, const T *gy, const double *st, double *part) {
    GRID_LOOP(i, chunks * D) {
        const int64_t ch = i / D, d = i % D, r1 = (ch + 1) * rows < M ? (ch + 1) * rows : M;
        double aw = 0, ab = 0;
        for (int64_t r = ch * rows; r < r1; r++) { double g = (double)gy[r * D + d]; aw += g * (((double)x[r * D + d] - st[r]) * st[M + r]); ab += g; }
        part[2 * ch * D + d] = aw;
        part[(2 * ch + 1) * D + d] = ab;
    }
}
template <class T> __global__ void k_ln_fold(int64_t chunks, int64_t D, const double *part, T *gw, T *gb) {
    GRID_LOOP(d, D) {
        double aw = 0, ab = 0;
        for (int64_t ch = 0; ch < chunks; ch++) { aw += part[2 * ch * D + d]; ab += part[(2 * ch + 1) * D + d]; }
        if (gw) gw[d] = (T)aw;
        if (gb) gb[d] = (T)ab;
    }
}
template <class T> static int ln_run(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                                     tn_tensor *gb, double eps) {
    const char *what = mode ? "layer_norm backward" : "layer_norm forward";
    const int64_t M = x->shape[0], D = x->shape[1];
    const T *xp = (const T *)base_of(x), *wp = w ? (const T *)base_of(w) : NULL;
    double *sp = (double *)base_of(st);
    if (mode == 0) {
        k_ln_fwd<T><<<blocks_for(M * 32), kThreads, 0, cu_stream()>>>(M, D, xp, (T *)base_of(y), wp, b ? (const T *)base_of(b) : NULL, sp, eps);
        CU_LAUNCHED(what);
        return 0;
    }
    const T *gp = (const T *)base_of(y);   /* the output gradient */
    if (gx) {
        k_ln_bwd_x<T><<<blocks_for(M * 32), kThreads, 0, cu_stream()>>>(M, D, xp, gp, wp, sp, (T *)base_of(gx));
        CU_LAUNCHED(what);
    }
    if (gw || gb) {
        const int64_t rows = 64, chunks = (M + rows - 1) / rows;
        Scratch sc;
        double *part = (double *)sc.get((size_t)(2 * chunks * D) * sizeof(double));
        if (!part) return -1;
        k_ln_bwd_w<T><<<blocks_for(chunks * D), kThreads, 0, cu_stream()>>>(M, D, chunks, rows, xp, gp, sp, part);
        CU_LAUNCHED(what);
        k_ln_fold<T><<<blocks_for(D), kThreads, 0, cu_stream()>>>(chunks, D, part, gw ? (T *)base_of(gw) : NULL, gb ? (T *)base_of(gb) : NULL);
        CU_LAUNCHED(what);
    }
    return 0;
}
static int cu_cross_entropy(int mode, tn_tensor *x, tn_tensor *t, tn_tensor *wr, tn_tensor *lse, tn_tensor *out, tn_tensor *gx) {
    const bool f32 = x->dtype == TN_F32;
    if ((!f32 && x->dtype != TN_F64) || t->dtype != TN_I64 || lse->dtype != TN_F64 || wr->dtype != x->dtype || out->dtype != x->dtype || x->shape[1] == 0) return 1;
    tn_tensor *const ts[6] = {x, t, wr, lse, out, gx};
    if (!dense(ts, 6, NULL)) return 1;
    const int64_t N = x->shape[0], C = x->shape[1];
    const int64_t *tp = (const int64_t *)base_of(t);
    double *lp = (double *)base_of(lse);
    if (f32) k_ce_rows<float><<<blocks_for(N * 32), kThreads, 0, cu_stream()>>>(mode, N, C, (const float *)base_of(x), tp, (const float *)base_of(wr), lp, (float *)base_of(out),
                                                                 gx ? (float *)base_of(gx) : NULL);
    else k_ce_rows<double><<<blocks_for(N * 32), kThreads, 0, cu_stream()>>>(mode, N, C, (const double *)base_of(x), tp, (const double *)base_of(wr), lp, (double *)base_of(out),
                                                             gx ? (double *)base_of(gx) : NULL);
    CU_LAUNCHED(mode ? "cross_entropy backward" : "cross_entropy forward");
    return 0;
}
static int cu_layer_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw, tn_tensor *gb,
                         double eps) {
    const bool f32 = x->dtype == TN_F32;
    if ((!f32 && x->dtype != TN_F64) || st->dtype != TN_F64 || !tn_is_contiguous(st) || tn_numel(x) == 0 || (mode == 0 && !w != !b)) return 1;
    tn_tensor *const ts[7] = {x, w, b, y, gx, gw, gb};
    if (!dense(ts, 7, x)) return 1;
    return f32 ? ln_run<float>(mode, x, w, b, st, y, gx, gw, gb, eps) : ln_run<double>(mode, x, w, b, st, y, gx, gw, gb, eps);
}

/* ---- fused attention (tn_backend.attention): FlashAttention's tiling on CUDA cores ----
   A block of 4 BR threads owns a tile of BR rows; thread t (x = t % 16, gr = t / 16) holds
   rows gr + BR/4 ii (ii < 4) of every tile product it computes, columns x + 16 jj of the
   scores and attn_col(x, jj) of the products with a value or key tile, so one row's values
   sit in 16 lanes of one warp (its maximum and sum by shuffles, no shared memory). Forward: a block per (batch, query tile) walks the key tiles with the online
   softmax, the output rescaled in registers; out and the logsumexp per row are written,
   never the L x S scores. Backward, deterministic (no atomics): D = rowsum(dout * out), a
   block per (batch, key tile) walking the query tiles for dk and dv, and a block per
   (batch, query tile) walking the key tiles for dq; both recompute P = exp(s - lse).
   float32 accumulates in float32 (as the CPU's kernel), float64 in float64; bfloat16 and
   float16 (S, the storage type) are read into float32 tiles (T) and computed as float32,
   their logsumexp and row dots kept in float32, the results rounded once. The rules
   (masked rows NaN, their score gradients zero except under an additive mask) are
   src/nn/attention.c's. */
struct AttnGeo {
    int nb;                       /* batch dims */
    int64_t bshape[TN_MAX_DIMS], qb[TN_MAX_DIMS], kb[TN_MAX_DIMS], vb[TN_MAX_DIMS], mb[TN_MAX_DIMS];
    int64_t rq, rk, rv, rm, cm;   /* row strides; the mask's column stride */
    int64_t L, S;
    int E, Ev;
    int mask_kind;                /* 0 none, 1 bool (true = may attend), 2 additive */
    bool causal;
    double scale;
};
__device__ __forceinline__ float attn_exp(float x) { return expf(x); }
__device__ __forceinline__ double attn_exp(double x) { return exp(x); }
__device__ __forceinline__ float attn_log(float x) { return logf(x); }
/* the tile products' multiply-adds fused explicitly: the unit builds with -fmad=false */
__device__ __forceinline__ float attn_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double attn_fma(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ double attn_log(double x) { return log(x); }
/* a stored element into the compute type T, and a result into its storage type S */
__device__ __forceinline__ float attn_in(float x) { return x; }
__device__ __forceinline__ double attn_in(double x) { return x; }
__device__ __forceinline__ float attn_in(bf16 x) { return bf16_f(x); }
__device__ __forceinline__ float attn_in(h16 x) { return h16_f(x); }
__device__ __forceinline__ void attn_st(float *p, float v) { *p = v; }
__device__ __forceinline__ void attn_st(double *p, double v) { *p = v; }
__device__ __forceinline__ void attn_st(bf16 *p, float v) { *p = to_bf16(v, true); }
__device__ __forceinline__ void attn_st(h16 *p, float v) { *p = to_h16(v); }
template <class T> __device__ __forceinline__ T attn_sum16(T v) {   /* over the 16 lanes of a row */
    for (int w = 8; w > 0; w >>= 1) v += __shfl_xor_sync(0xffffffffu, v, w);
    return v;
}
template <class T> __device__ __forceinline__ T attn_max16(T v) {   /* NaN never wins, as the CPU's s > m */
    for (int w = 8; w > 0; w >>= 1) { T o = __shfl_xor_sync(0xffffffffu, v, w); v = o > v ? o : v; }
    return v;
}
__device__ __forceinline__ void attn_offsets(const AttnGeo &g, int64_t b, int64_t *qo, int64_t *ko, int64_t *vo, int64_t *mo) {
    *qo = *ko = *vo = *mo = 0;
    for (int d = g.nb - 1; d >= 0; d--) {
        const int64_t i = b % g.bshape[d];
        b /= g.bshape[d];
        *qo += i * g.qb[d]; *ko += i * g.kb[d]; *vo += i * g.vb[d]; *mo += i * g.mb[d];
    }
}
/* Shared tiles hold rows at a pitch of whole 16-byte packs (the dot products read 16 bytes
   at a time: a quarter of the shared-memory instructions of one element at a time), an odd
   number of them so the 8 rows a quarter warp reads fall in different banks; the columns
   from a row's width up to the pack boundary are zeros. */
template <class T> struct AttnPack { static const int W = 16 / sizeof(T); };
template <class T> __host__ __device__ __forceinline__ int attn_pitch(int w) {
    const int W = AttnPack<T>::W, p = (w + W - 1) / W * W;
    return (p / W) % 2 ? p : p + W;
}
/* the pitch of the probability tile P (BC columns): whole 16-byte packs, and 64 bytes past a
   multiple of 128 so the two rows a warp writes (lanes 0-15, 16-31) fall in different banks */
template <class T, int BC> __host__ __device__ constexpr int attn_pp() { return BC + 64 / (int)sizeof(T); }
__device__ __forceinline__ void attn_ld16(const float *p, float (&o)[4]) {
    const float4 v = *reinterpret_cast<const float4 *>(p);
    o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
}
__device__ __forceinline__ void attn_ld16(const double *p, double (&o)[2]) {
    const double2 v = *reinterpret_cast<const double2 *>(p);
    o[0] = v.x; o[1] = v.y;
}
/* acc[ii][jj] = A[row ii] . B[col jj] over n (the zero padding to the pack boundary adds
   nothing): A and B row-major in shared memory, pitches pa, pb; the products are added in
   order of d, as one element at a time */
template <class T, int NC>
__device__ __forceinline__ void attn_dot(T (&acc)[4][NC], const T *A, int pa, const T *B, int pb, int n, int gr, int x, int gs) {
    constexpr int W = AttnPack<T>::W;
#pragma unroll
    for (int ii = 0; ii < 4; ii++)
#pragma unroll
        for (int jj = 0; jj < NC; jj++) acc[ii][jj] = 0;
    for (int d = 0; d < n; d += W) {
        T a[4][W], b[NC][W];
#pragma unroll
        for (int ii = 0; ii < 4; ii++) attn_ld16(&A[(gr + gs * ii) * pa + d], a[ii]);
#pragma unroll
        for (int jj = 0; jj < NC; jj++) attn_ld16(&B[(x + 16 * jj) * pb + d], b[jj]);
#pragma unroll
        for (int w = 0; w < W; w++)
#pragma unroll
            for (int ii = 0; ii < 4; ii++)
#pragma unroll
                for (int jj = 0; jj < NC; jj++) acc[ii][jj] = attn_fma(a[ii][w], b[jj][w], acc[ii][jj]);
    }
}
/* the columns a lane owns in a product with a value or key tile (attn_pm): 4 consecutive
   ones per 64, so one 16-byte shared read (two for float64) brings all of them */
__device__ __forceinline__ int attn_col(int x, int jj) { return 64 * (jj >> 2) + 4 * x + (jj & 3); }
/* the 4 elements of shared row p from column c (a multiple of 4); zeros from the row's width
   w on: the row is zero-padded to its pack boundary only, past that is the next row */
__device__ __forceinline__ void attn_ld4(const float *p, int c, int w, float (&o)[4]) {
    if (c < w) attn_ld16(p + c, o);
    else o[0] = o[1] = o[2] = o[3] = 0;
}
__device__ __forceinline__ void attn_ld4(const double *p, int c, int w, double (&o)[4]) {
    double a[2] = {0, 0}, b[2] = {0, 0};
    if (c < w) attn_ld16(p + c, a);
    if (c + 2 < w) attn_ld16(p + c + 2, b);
    o[0] = a[0]; o[1] = a[1]; o[2] = b[0]; o[3] = b[1];
}
/* acc[ii][jj] += sum_c P[row ii][c] M[c][attn_col(x, jj)] over c < nc (a multiple of 4; P
   pitch pp, M pitch pm, both multiples of the pack, M's width w), in order of c. Four
   columns of P and of M per 16-byte read: a quarter of the shared-memory instructions of
   one element at a time, which bound this product */
template <class T, int NO>
__device__ __forceinline__ void attn_pm(T (&acc)[4][NO], const T *P, int pp, const T *M, int pm, int w, int nc, int gr, int x, int gs) {
    for (int c = 0; c < nc; c += 4) {
        T p[4][4];
#pragma unroll
        for (int ii = 0; ii < 4; ii++) attn_ld4(&P[(gr + gs * ii) * pp], c, nc, p[ii]);
#pragma unroll
        for (int cc = 0; cc < 4; cc++) {
            T mv[NO / 4][4];
#pragma unroll
            for (int h = 0; h < NO / 4; h++) attn_ld4(&M[(c + cc) * pm], 64 * h + 4 * x, w, mv[h]);
#pragma unroll
            for (int ii = 0; ii < 4; ii++)
#pragma unroll
                for (int jj = 0; jj < NO; jj++) acc[ii][jj] = attn_fma(p[ii][cc], mv[jj >> 2][jj & 3], acc[ii][jj]);
        }
    }
}
/* the score (i, j) from scale q_i . k_j: -inf outside [0, L) x [0, S), where the bool mask or
   the causal rule masks it; the additive mask added */
template <class T> __device__ __forceinline__ T attn_score(const AttnGeo &g, const void *m, int64_t mo, int64_t i, int64_t j, T s) {
    if (i >= g.L || j >= g.S) return -(T)INFINITY;
    if (g.mask_kind == 1 && !((const bool *)m)[mo + i * g.rm + j * g.cm]) s = -(T)INFINITY;
    else if (g.mask_kind == 2) s += ((const T *)m)[mo + i * g.rm + j * g.cm];
    return g.causal && j > i ? -(T)INFINITY : s;
}
/* W stored elements read at once (16 bytes of float32/float64, 8 of a half type) */
template <class S, int W> struct alignas(sizeof(S) * W) AttnSPack { S v[W]; };
/* rows [r0, r0 + n) of a matrix (row stride rs, last dim contiguous, width w) into shared
   rows of pitch p; zeros past nmax and from w to the pack boundary. A thread moves a whole
   pack (W elements: one global and one 16-byte shared access, one index division) where the
   rows' packs are aligned, else element by element; the same values either way. */
template <class T, class S> __device__ __forceinline__ void attn_load(T *dst, int p, const S *src, int64_t rs, int64_t r0, int n, int64_t nmax, int w) {
    constexpr int W = AttnPack<T>::W;
    typedef AttnSPack<S, W> SP;
    typedef AttnSPack<T, W> TP;
    const int np = (w + W - 1) / W;   /* packs per row */
    const bool vec = (uintptr_t)src % sizeof(SP) == 0 && rs % W == 0;   /* the same for every thread */
    for (int idx = threadIdx.x; idx < n * np; idx += blockDim.x) {
        const int r = idx / np, d = (idx - r * np) * W;
        TP t;
        if (r0 + r >= nmax) {
#pragma unroll
            for (int e = 0; e < W; e++) t.v[e] = (T)0;
        } else if (vec && d + W <= w) {
            const SP a = *reinterpret_cast<const SP *>(src + (r0 + r) * rs + d);
#pragma unroll
            for (int e = 0; e < W; e++) t.v[e] = (T)attn_in(a.v[e]);
        } else {
#pragma unroll
            for (int e = 0; e < W; e++) t.v[e] = d + e < w ? (T)attn_in(src[(r0 + r) * rs + d + e]) : (T)0;
        }
        *reinterpret_cast<TP *>(&dst[r * p + d]) = t;
    }
}

template <class T, class S, int BR, int BC, int NO>
__global__ void __launch_bounds__(4 * BR) k_attn_fwd(AttnGeo g, const S *q, const S *k, const S *v, const void *m, S *out, T *lse) {
    extern __shared__ __align__(16) unsigned char attn_smem[];
    constexpr int GS = BR / 4, NC = BC / 16, PP = attn_pp<T, BC>();
    const int x = threadIdx.x & 15, gr = threadIdx.x >> 4, E = g.E, Ev = g.Ev, pq = attn_pitch<T>(E), pv = attn_pitch<T>(Ev);
    T *Qs = (T *)attn_smem, *Ks = Qs + BR * pq, *Vs = Ks + BC * pq, *Ps = Vs + BC * pv;
    const int64_t nqt = (g.L + BR - 1) / BR, b = blockIdx.x / nqt, i0 = blockIdx.x % nqt * BR;
    int64_t qo, ko, vo, mo;
    attn_offsets(g, b, &qo, &ko, &vo, &mo);
    attn_load(Qs, pq, q + qo, g.rq, i0, BR, g.L, E);
    T o[4][NO], mx[4], sum[4];
#pragma unroll
    for (int ii = 0; ii < 4; ii++) {
        mx[ii] = -(T)INFINITY;
        sum[ii] = 0;
#pragma unroll
        for (int jj = 0; jj < NO; jj++) o[ii][jj] = 0;
    }
    const int64_t iend = i0 + BR < g.L ? i0 + BR : g.L, jend = g.causal && iend < g.S ? iend : g.S;   /* keys past the last row's: masked */
    for (int64_t j0 = 0; j0 < jend; j0 += BC) {
        __syncthreads();   /* the last tile's reads are done */
        attn_load(Ks, pq, k + ko, g.rk, j0, BC, g.S, E);
        attn_load(Vs, pv, v + vo, g.rv, j0, BC, g.S, Ev);
        __syncthreads();
        T s[4][NC];
        attn_dot<T, NC>(s, Qs, pq, Ks, pq, E, gr, x, GS);
#pragma unroll
        for (int ii = 0; ii < 4; ii++) {
            const int64_t i = i0 + gr + GS * ii;
            T rmax = -(T)INFINITY;
#pragma unroll
            for (int jj = 0; jj < NC; jj++) {
                s[ii][jj] = attn_score<T>(g, m, mo, i, j0 + x + 16 * jj, s[ii][jj] * (T)g.scale);
                rmax = s[ii][jj] > rmax ? s[ii][jj] : rmax;
            }
            rmax = attn_max16(rmax);
            const T mnew = rmax > mx[ii] ? rmax : mx[ii];
            const bool live = mnew != -(T)INFINITY;   /* else every key so far is masked: nothing changes */
            const T alpha = live ? attn_exp(mx[ii] - mnew) : (T)1;
            T rs = 0;
#pragma unroll
            for (int jj = 0; jj < NC; jj++) {
                s[ii][jj] = live ? attn_exp(s[ii][jj] - mnew) : (T)0;
                rs += s[ii][jj];
                Ps[(gr + GS * ii) * PP + x + 16 * jj] = s[ii][jj];
            }
            rs = attn_sum16(rs);   /* every lane of the warp, whatever live is */
            if (live) {
                sum[ii] = sum[ii] * alpha + rs;
                mx[ii] = mnew;
#pragma unroll
                for (int jj = 0; jj < NO; jj++) o[ii][jj] *= alpha;
            }
        }
        __syncwarp();   /* a row of P is written and read by its own 16 lanes */
        attn_pm<T, NO>(o, Ps, PP, Vs, pv, Ev, BC, gr, x, GS);
    }
#pragma unroll
    for (int ii = 0; ii < 4; ii++) {   /* a row with every key masked is NaN, as softmax over -inf */
        const int64_t i = i0 + gr + GS * ii;
        if (i >= g.L) continue;
        const T inv = sum[ii] > 0 ? 1 / sum[ii] : (T)NAN;
#pragma unroll
        for (int jj = 0; jj < NO; jj++)
            if (attn_col(x, jj) < Ev) attn_st(&out[(b * g.L + i) * Ev + attn_col(x, jj)], o[ii][jj] * inv);
        if (x == 0) lse[b * g.L + i] = sum[ii] > 0 ? mx[ii] + attn_log(sum[ii]) : (T)NAN;
    }
}
/* D[r] = dout[r] . out[r]: a warp per row */
template <class T, class S> __global__ void k_attn_rowdot(int64_t M, int n, const S *a, const S *b, T *D) {
    const int lane = threadIdx.x & 31;
    for (int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < M; r += (int64_t)gridDim.x * blockDim.x / 32) {
        T s = 0;
        for (int e = lane; e < n; e += 32) s += (T)attn_in(a[r * n + e]) * (T)attn_in(b[r * n + e]);
        for (int w = 16; w > 0; w >>= 1) s += __shfl_xor_sync(0xffffffffu, s, w);
        if (lane == 0) D[r] = s;
    }
}
/* dk and dv of the key tile [j0, j0 + BR): rows are keys, columns queries. Two float32
   blocks per SM for head dims up to 64 (at most 128 registers: ptxas spills a few words
   outside the tile loop), where the two accumulators took 176 and left one block of 8
   warps per SM to hide every latency */
template <class T, class S, int BR, int BC, int NO>
__global__ void __launch_bounds__(4 * BR, sizeof(T) == 4 && NO == 4 ? 2 : 1) k_attn_bwd_kv(AttnGeo g, const S *q, const S *k, const S *v, const void *m, const S *dout, const T *lse,
                                                         const T *D, S *dk, S *dv) {
    extern __shared__ __align__(16) unsigned char attn_smem[];
    constexpr int GS = BR / 4, NC = BC / 16, PP = attn_pp<T, BC>();
    const int x = threadIdx.x & 15, gr = threadIdx.x >> 4, E = g.E, Ev = g.Ev, pq = attn_pitch<T>(E), pv = attn_pitch<T>(Ev);
    T *Ks = (T *)attn_smem, *Vs = Ks + BR * pq, *Qs = Vs + BR * pv, *dOs = Qs + BC * pq, *Ps = dOs + BC * pv, *ls = Ps + BR * PP, *Ds = ls + BC;
    const int64_t nkt = (g.S + BR - 1) / BR, b = blockIdx.x / nkt, j0 = blockIdx.x % nkt * BR;
    int64_t qo, ko, vo, mo;
    attn_offsets(g, b, &qo, &ko, &vo, &mo);
    attn_load(Ks, pq, k + ko, g.rk, j0, BR, g.S, E);
    attn_load(Vs, pv, v + vo, g.rv, j0, BR, g.S, Ev);
    T ak[4][NO], av[4][NO];
#pragma unroll
    for (int ii = 0; ii < 4; ii++)
#pragma unroll
        for (int jj = 0; jj < NO; jj++) ak[ii][jj] = av[ii][jj] = 0;
    /* causal: queries before j0 see none of these keys */
    for (int64_t i0 = g.causal ? j0 / BC * BC : 0; i0 < g.L; i0 += BC) {
        __syncthreads();
        attn_load(Qs, pq, q + qo, g.rq, i0, BC, g.L, E);
        attn_load(dOs, pv, dout + b * g.L * Ev, (int64_t)Ev, i0, BC, g.L, Ev);
        for (int c = threadIdx.x; c < BC; c += blockDim.x) {
            ls[c] = i0 + c < g.L ? lse[b * g.L + i0 + c] : (T)0;
            Ds[c] = i0 + c < g.L ? D[b * g.L + i0 + c] : (T)0;
        }
        __syncthreads();
        T s[4][NC], dp[4][NC];
        attn_dot<T, NC>(s, Ks, pq, Qs, pq, E, gr, x, GS);
        attn_dot<T, NC>(dp, Vs, pv, dOs, pv, Ev, gr, x, GS);
#pragma unroll
        for (int ii = 0; ii < 4; ii++)
#pragma unroll
            for (int jj = 0; jj < NC; jj++) {
                const int c = x + 16 * jj;
                const int64_t i = i0 + c, j = j0 + gr + GS * ii;
                const T l = ls[c], p = i < g.L ? attn_exp(attn_score<T>(g, m, mo, i, j, s[ii][jj] * (T)g.scale) - l) : (T)0;
                /* a row with every key masked by a bool or causal mask: NaN weights (dv gets them),
                   but masked_fill's backward zeroes its scores' gradient */
                dp[ii][jj] = g.mask_kind != 2 && l != l ? (T)0 : p * (dp[ii][jj] - Ds[c]);
                Ps[(gr + GS * ii) * PP + c] = p;
            }
        __syncwarp();
        attn_pm<T, NO>(av, Ps, PP, dOs, pv, Ev, BC, gr, x, GS);   /* dv += P^T dout */
        __syncwarp();
#pragma unroll
        for (int ii = 0; ii < 4; ii++)
#pragma unroll
            for (int jj = 0; jj < NC; jj++) Ps[(gr + GS * ii) * PP + x + 16 * jj] = dp[ii][jj];
        __syncwarp();
        attn_pm<T, NO>(ak, Ps, PP, Qs, pq, E, BC, gr, x, GS);     /* dk += dS^T q (scaled below) */
    }
#pragma unroll
    for (int ii = 0; ii < 4; ii++) {
        const int64_t j = j0 + gr + GS * ii;
        if (j >= g.S) continue;
#pragma unroll
        for (int jj = 0; jj < NO; jj++) {
            const int e = attn_col(x, jj);
            if (e < E) attn_st(&dk[(b * g.S + j) * E + e], ak[ii][jj] * (T)g.scale);
            if (e < Ev) attn_st(&dv[(b * g.S + j) * Ev + e], av[ii][jj]);
        }
    }
}
/* dq of the query tile [i0, i0 + BR): rows are queries, columns keys */
template <class T, class S, int BR, int BC, int NO>
__global__ void __launch_bounds__(4 * BR) k_attn_bwd_q(AttnGeo g, const S *q, const S *k, const S *v, const void *m, const S *dout, const T *lse,
                                                        const T *D, S *dq) {
    extern __shared__ __align__(16) unsigned char attn_smem[];
    constexpr int GS = BR / 4, NC = BC / 16, PP = attn_pp<T, BC>();
    const int x = threadIdx.x & 15, gr = threadIdx.x >> 4, E = g.E, Ev = g.Ev, pq = attn_pitch<T>(E), pv = attn_pitch<T>(Ev);
    T *Qs = (T *)attn_smem, *dOs = Qs + BR * pq, *Ks = dOs + BR * pv, *Vs = Ks + BC * pq, *Ps = Vs + BC * pv;
    const int64_t nqt = (g.L + BR - 1) / BR, b = blockIdx.x / nqt, i0 = blockIdx.x % nqt * BR;
    int64_t qo, ko, vo, mo;
    attn_offsets(g, b, &qo, &ko, &vo, &mo);
    attn_load(Qs, pq, q + qo, g.rq, i0, BR, g.L, E);
    attn_load(dOs, pv, dout + b * g.L * Ev, (int64_t)Ev, i0, BR, g.L, Ev);
    T l[4], Dr[4], aq[4][NO];
#pragma unroll
    for (int ii = 0; ii < 4; ii++) {
        const int64_t i = i0 + gr + GS * ii;
        l[ii] = i < g.L ? lse[b * g.L + i] : (T)0;
        Dr[ii] = i < g.L ? D[b * g.L + i] : (T)0;
#pragma unroll
        for (int jj = 0; jj < NO; jj++) aq[ii][jj] = 0;
    }
    const int64_t iend = i0 + BR < g.L ? i0 + BR : g.L, jend = g.causal && iend < g.S ? iend : g.S;
    for (int64_t j0 = 0; j0 < jend; j0 += BC) {
        __syncthreads();
        attn_load(Ks, pq, k + ko, g.rk, j0, BC, g.S, E);
        attn_load(Vs, pv, v + vo, g.rv, j0, BC, g.S, Ev);
        __syncthreads();
        T s[4][NC], dp[4][NC];
        attn_dot<T, NC>(s, Qs, pq, Ks, pq, E, gr, x, GS);
        attn_dot<T, NC>(dp, dOs, pv, Vs, pv, Ev, gr, x, GS);
#pragma unroll
        for (int ii = 0; ii < 4; ii++)
#pragma unroll
            for (int jj = 0; jj < NC; jj++) {
                const int64_t i = i0 + gr + GS * ii, j = j0 + x + 16 * jj;
                const T p = attn_exp(attn_score<T>(g, m, mo, i, j, s[ii][jj] * (T)g.scale) - l[ii]);
                Ps[(gr + GS * ii) * PP + x + 16 * jj] = g.mask_kind != 2 && l[ii] != l[ii] ? (T)0 : p * (dp[ii][jj] - Dr[ii]);
            }
        __syncwarp();
        attn_pm<T, NO>(aq, Ps, PP, Ks, pq, E, BC, gr, x, GS);     /* dq += dS k (scaled below) */
    }
#pragma unroll
    for (int ii = 0; ii < 4; ii++) {
        const int64_t i = i0 + gr + GS * ii;
        if (i >= g.L) continue;
#pragma unroll
        for (int jj = 0; jj < NO; jj++)
            if (attn_col(x, jj) < E) attn_st(&dq[(b * g.L + i) * E + attn_col(x, jj)], aq[ii][jj] * (T)g.scale);
    }
}
/* dynamic shared memory above the default 48 KiB needs the kernel's consent first */
template <class K> static int attn_smem_ok(K kernel, size_t bytes) {
    if (bytes > 48 * 1024) CU_CHECK("attention", cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    return 0;
}
template <class T, class S, int BR, int BC, int NO>
static int attn_run(const AttnGeo &g, int64_t B, const S *q, const S *k, const S *v, const void *m, S *out, T *lse, const S *dout, S *dq, S *dk, S *dv) {
    const int E = g.E, Ev = g.Ev, pq = attn_pitch<T>(E), pv = attn_pitch<T>(Ev);
    const int64_t nqt = (g.L + BR - 1) / BR, nkt = (g.S + BR - 1) / BR;
    if (!dout) {
        const size_t bytes = (size_t)((BR + BC) * pq + BC * pv + BR * attn_pp<T, BC>()) * sizeof(T);
        if (attn_smem_ok(k_attn_fwd<T, S, BR, BC, NO>, bytes)) return -1;
        k_attn_fwd<T, S, BR, BC, NO><<<(unsigned)(B * nqt), 4 * BR, bytes, cu_stream()>>>(g, q, k, v, m, out, lse);
        CU_LAUNCHED("attention forward");
        return 0;
    }
    Scratch sc;
    T *D = (T *)sc.get((size_t)(B * g.L) * sizeof(T));
    if (!D) return -1;
    k_attn_rowdot<T, S><<<blocks_for(B * g.L * 32), kThreads, 0, cu_stream()>>>(B * g.L, Ev, dout, out, D);
    CU_LAUNCHED("attention backward");
    const size_t bytes = (size_t)((BR + BC) * (pq + pv) + BR * attn_pp<T, BC>() + 2 * BC) * sizeof(T);
    if (attn_smem_ok(k_attn_bwd_kv<T, S, BR, BC, NO>, bytes) || attn_smem_ok(k_attn_bwd_q<T, S, BR, BC, NO>, bytes)) return -1;
    k_attn_bwd_kv<T, S, BR, BC, NO><<<(unsigned)(B * nkt), 4 * BR, bytes, cu_stream()>>>(g, q, k, v, m, dout, lse, D, dk, dv);
    CU_LAUNCHED("attention backward");
    k_attn_bwd_q<T, S, BR, BC, NO><<<(unsigned)(B * nqt), 4 * BR, bytes, cu_stream()>>>(g, q, k, v, m, dout, lse, D, dq);
    CU_LAUNCHED("attention backward");
    return 0;
}
static std::atomic<int64_t> n_attn, n_attn_fallbacks;   /* calls run, calls declined (tn_cuda_stats) */
static int cu_attention(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, tn_tensor *out, tn_tensor *lse, tn_tensor *dout, tn_tensor *dq,
                        tn_tensor *dk, tn_tensor *dv, double scale, bool causal) {
    if (dout && (!dq || !dk || !dv)) return tn_error("attention backward: dq, dk and dv are all written");
    const char *off_ = getenv("TN_CUDA_FUSED_ATTENTION");
    if (tn__attention_declines(off_ && !strcmp(off_, "0"), q, k, v, mask, out, lse, dout, dq, dk, dv)) {   /* src/api.h */
        n_attn_fallbacks++;
        return 1;
    }
    n_attn++;
    const int nd = q->ndim;
    AttnGeo g;
    memset(&g, 0, sizeof g);
    g.nb = nd - 2;
    int64_t B = 1;
    for (int d = 0; d < g.nb; d++) {
        g.bshape[d] = q->shape[d];
        g.qb[d] = q->strides[d]; g.kb[d] = k->strides[d]; g.vb[d] = v->strides[d]; g.mb[d] = mask ? mask->strides[d] : 0;
        B *= q->shape[d];
    }
    g.rq = q->strides[nd - 2]; g.rk = k->strides[nd - 2]; g.rv = v->strides[nd - 2];
    g.rm = mask ? mask->strides[nd - 2] : 0; g.cm = mask ? mask->strides[nd - 1] : 0;
    g.L = q->shape[nd - 2]; g.S = k->shape[nd - 2]; g.E = (int)q->shape[nd - 1]; g.Ev = (int)v->shape[nd - 1];
    g.mask_kind = !mask ? 0 : mask->dtype == TN_BOOL ? 1 : 2;
    g.causal = causal;
    g.scale = scale;
    const void *mp = mask ? (const void *)base_of(mask) : NULL;
    const bool wide = g.E > 64 || g.Ev > 64;
#define ATTN_ARGS(S, T) g, B, (const S *)base_of(q), (const S *)base_of(k), (const S *)base_of(v), mp, (S *)base_of(out), (T *)base_of(lse), \
                        dout ? (const S *)base_of(dout) : NULL, dq ? (S *)base_of(dq) : NULL, dk ? (S *)base_of(dk) : NULL, dv ? (S *)base_of(dv) : NULL
#define ATTN_F32(S) (wide ? attn_run<float, S, 64, 64, 8>(ATTN_ARGS(S, float)) : attn_run<float, S, 64, 64, 4>(ATTN_ARGS(S, float)))
    if (q->dtype == TN_F32) return ATTN_F32(float);
    if (q->dtype == TN_BF16) return ATTN_F32(bf16);
    if (q->dtype == TN_F16) return ATTN_F32(h16);
    /* float64 in 32-row tiles: its shared memory then fits as float32's 64-row ones */
    return wide ? attn_run<double, double, 32, 32, 8>(ATTN_ARGS(double, double)) : attn_run<double, double, 32, 32, 4>(ATTN_ARGS(double, double));
#undef ATTN_F32
#undef ATTN_ARGS
}

/* ======================================================================= */
/* 6. indexing, nonzero                                                     */
/* ======================================================================= */
struct IndexGeo {
    int nd, k;
    int64_t shape[TN_MAX_DIMS];
    int64_t st[2 + TN_MAX_DIMS][TN_MAX_DIMS]; /* dst, src, idx_0 .. idx_{k-1} */
    int64_t idx_strides[TN_MAX_DIMS];
    const int64_t *idx[TN_MAX_DIMS];          /* in the kernel's parameters: no copy to the device */
};
/* SCATTER_ADD: atomics, so duplicate indices add up; uint8/bool through a 32-bit CAS */
__device__ __forceinline__ void atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int32_t *p, int32_t v) { atomicAdd((int *)p, (int)v); }
__device__ __forceinline__ void atomic_add(int64_t *p, int64_t v) { atomicAdd((unsigned long long *)p, (unsigned long long)v); }
__device__ __forceinline__ void atomic_byte(uint8_t *p, uint8_t v, bool is_bool) {
    unsigned int *w = (unsigned int *)((size_t)p & ~(size_t)3);
    unsigned shift = (unsigned)((size_t)p & 3) * 8, old = *w, assumed;
    do {
        assumed = old;
        unsigned b = (assumed >> shift) & 0xffu, nb = is_bool ? (b || v) : (unsigned)(uint8_t)(b + v);
        old = atomicCAS(w, assumed, (assumed & ~(0xffu << shift)) | (nb << shift));
    } while (old != assumed);
}
__device__ __forceinline__ void atomic_add(uint8_t *p, uint8_t v) { atomic_byte(p, v, false); }
__device__ __forceinline__ void atomic_add(bool *p, bool v) { atomic_byte((uint8_t *)p, (uint8_t)v, true); }

/* SCATTER_MUL / MAX / MIN: a compare-and-swap loop on the element's word (a 32-bit word
   around a byte), as the CPU combines: integers multiply wrapping, NaN sticks in max/min */
template <class T> __device__ __forceinline__ T reduce_pair(int mode, T d, T s) {
    if (mode == SCATTER_MUL) return (T)(d * s);
    if (d != d) return d;
    return (s != s || (mode == SCATTER_MAX ? s > d : s < d)) ? s : d;
}
template <> __device__ __forceinline__ int32_t reduce_pair<int32_t>(int mode, int32_t d, int32_t s) {
    return mode == SCATTER_MUL ? (int32_t)((uint32_t)d * (uint32_t)s) : mode == SCATTER_MAX ? (s > d ? s : d) : (s < d ? s : d);
}
template <> __device__ __forceinline__ int64_t reduce_pair<int64_t>(int mode, int64_t d, int64_t s) {
    return mode == SCATTER_MUL ? (int64_t)((uint64_t)d * (uint64_t)s) : mode == SCATTER_MAX ? (s > d ? s : d) : (s < d ? s : d);
}
template <> __device__ __forceinline__ bool reduce_pair<bool>(int mode, bool d, bool s) { return mode == SCATTER_MAX ? (d || s) : (d && s); }
template <class T, class W> __device__ __forceinline__ void atomic_reduce_word(int mode, T *p, T v) {
    W *w = (W *)p, old = *w, assumed;
    do {
        assumed = old;
        T cur;
        memcpy(&cur, &assumed, sizeof cur);
        T nv = reduce_pair<T>(mode, cur, v);
        W nw;
        memcpy(&nw, &nv, sizeof nw);
        old = atomicCAS(w, assumed, nw);
    } while (old != assumed);
}
__device__ __forceinline__ void atomic_reduce(int mode, float *p, float v) { atomic_reduce_word<float, unsigned int>(mode, p, v); }
__device__ __forceinline__ void atomic_reduce(int mode, int32_t *p, int32_t v) { atomic_reduce_word<int32_t, unsigned int>(mode, p, v); }
__device__ __forceinline__ void atomic_reduce(int mode, double *p, double v) { atomic_reduce_word<double, unsigned long long>(mode, p, v); }
__device__ __forceinline__ void atomic_reduce(int mode, int64_t *p, int64_t v) { atomic_reduce_word<int64_t, unsigned long long>(mode, p, v); }
template <class T> __device__ __forceinline__ void atomic_reduce_byte(int mode, T *p, T v) {
    unsigned int *w = (unsigned int *)((size_t)p & ~(size_t)3);
    unsigned shift = (unsigned)((size_t)p & 3) * 8, old = *w, assumed;
    do {
        assumed = old;
        T cur = (T)((assumed >> shift) & 0xffu);
        unsigned nb = (unsigned)(uint8_t)reduce_pair<T>(mode, cur, v);
        old = atomicCAS(w, assumed, (assumed & ~(0xffu << shift)) | (nb << shift));
    } while (old != assumed);
}
__device__ __forceinline__ void atomic_reduce(int mode, uint8_t *p, uint8_t v) { atomic_reduce_byte<uint8_t>(mode, p, v); }
__device__ __forceinline__ void atomic_reduce(int mode, bool *p, bool v) { atomic_reduce_byte<bool>(mode, p, v); }

/* element i's offsets (in elements) in dst (off[0]), src (off[1]) and the index tensors
   (off[2..]); returns the indexed offset, sum of idx[j] * idx_strides[j] */
__device__ __forceinline__ int64_t index_offsets(const IndexGeo &g, int64_t i, int64_t *off) {
    int64_t rest = i, o = 0;
    for (int j = 0; j < 2 + g.k; j++) off[j] = 0;
    for (int d = g.nd - 1; d >= 0; d--) {
        int64_t s = g.shape[d], q = rest / s, r = rest - q * s;
        rest = q;
        for (int j = 0; j < 2 + g.k; j++) off[j] += r * g.st[j][d];
    }
    for (int j = 0; j < g.k; j++) o += g.idx[j][off[2 + j]] * g.idx_strides[j];
    return o;
}
template <class T> __global__ void k_index(int64_t n, IndexGeo g, int mode, T *dst, const T *src) {
    GRID_LOOP(i, n) {
        int64_t off[2 + TN_MAX_DIMS], o = index_offsets(g, i, off);
        if (mode == GATHER) dst[off[0]] = src[off[1] + o];
        else if (mode == SCATTER) dst[off[0] + o] = src[off[1]];
        else if (mode == SCATTER_ADD) atomic_add(dst + off[0] + o, src[off[1]]);
        else atomic_reduce(mode, dst + off[0] + o, src[off[1]]);
    }
}
/* complex elements: moved whole; SCATTER_ADD adds part by part (as the CPU) */
template <class R> __global__ void k_index_cx(int64_t n, IndexGeo g, int mode, Cx<R> *dst, const Cx<R> *src) {
    GRID_LOOP(i, n) {
        int64_t off[2 + TN_MAX_DIMS], o = index_offsets(g, i, off);
        if (mode == GATHER) dst[off[0]] = src[off[1] + o];
        else if (mode == SCATTER) dst[off[0] + o] = src[off[1]];
        else {
            atomic_add(&dst[off[0] + o].re, src[off[1]].re);
            atomic_add(&dst[off[0] + o].im, src[off[1]].im);
        }
    }
}
static int cu_index(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *idx_strides, int k) {
    const char *fn = "index";
    if (tn_dtype_is_complex(dst->dtype) && !tn__cuda_complex_has(TN__CX_INDEX, mode)) return tn__cuda_complex_decline(TN__CX_INDEX, mode, dst->dtype);
    tn_tensor *shape_of = mode == GATHER ? dst : (k ? idx[0] : src);
    int64_t n = tn_numel(shape_of);
    if (n == 0) return 0;
    IndexGeo g;
    memset(&g, 0, sizeof g);
    g.nd = shape_of->ndim;
    g.k = k;
    for (int d = 0; d < g.nd; d++) {
        g.shape[d] = shape_of->shape[d];
        g.st[0][d] = dst->strides[d];
        g.st[1][d] = src->strides[d];
        for (int j = 0; j < k; j++) g.st[2 + j][d] = idx[j]->strides[d];
    }
    if (dst->device != TN_CUDA || src->device != TN_CUDA) return tn_error("%s: an operand is on the CPU, not on the GPU", fn);
    for (int j = 0; j < k; j++) {
        if (idx[j]->device != TN_CUDA) return tn_error("%s: index tensor %d is on the CPU, not on the GPU", fn, j);
        g.idx_strides[j] = idx_strides[j];
        g.idx[j] = (const int64_t *)base_of(idx[j]);
    }
    if (dst->dtype == TN_C64) k_index_cx<float><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (int)mode, (c64 *)base_of(dst), (const c64 *)base_of(src));
    else if (dst->dtype == TN_C128) k_index_cx<double><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (int)mode, (c128 *)base_of(dst), (const c128 *)base_of(src));
    else CU_DISPATCH(dst->dtype, T, k_index<T><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, (int)mode, (T *)base_of(dst), (const T *)base_of(src)))
    CU_LAUNCHED(fn);
    return 0;
}

/* index values checked on the device (tn_backend.check_index): a bad one is written to
   the host's slot and read after the next synchronisation, so nothing waits here */
template <class TI> __global__ void k_check_index(int64_t n, Geo<2> g, int64_t *out, const TI *idx, int64_t size, int flags, int64_t skip, int64_t *err) {
    GRID_LOOP(i, n) {
        int64_t off[2];
        offsets<2>(g, i, off);
        const int64_t v = (int64_t)idx[off[1]];
        int64_t w = v < 0 && (flags & 1) ? v + size : v;
        if ((flags & 2) && v == skip) w = 0;
        else if (w < 0 || w >= size) { report_bad(err, v); w = 0; }
        if (out) out[off[0]] = w;
    }
}
static int cu_check_index(tn_tensor *out, tn_tensor *idx, int64_t size, int flags, int64_t skip, int64_t *err) {
    const char *fn = "check_index";
    /* inside an eager capture (a pool: tn_cuda_graph_begin) err is a slot of the graph's,
       scanned at the synchronisation after each replay; a replay's capture has no such slot */
    if (cu_capturing && !cu_cap_pool) return cu_uncapturable("an index check");
    const int64_t n = tn_numel(idx);
    if (n == 0) return 0;
    if (idx->device != TN_CUDA || (out && (out->device != TN_CUDA || out->dtype != TN_I64 || !tn_is_contiguous(out))))
        return tn_error("%s: expected the indices and a contiguous int64 result on the GPU", fn);
    if (idx->dtype != TN_I64 && idx->dtype != TN_I32) return tn_error("%s: indices must be int64 or int32, got %s", fn, tn_dtype_name(idx->dtype));
    int64_t cst[TN_MAX_DIMS], st = 1;
    for (int d = idx->ndim - 1; d >= 0; d--) { cst[d] = st; st *= idx->shape[d] > 1 ? idx->shape[d] : 1; }
    const int64_t *strides[2] = {cst, idx->strides};
    Geo<2> g = make_geo<2>(idx->shape, idx->ndim, strides);
    int64_t *o = out ? (int64_t *)base_of(out) : NULL;
    if (idx->dtype == TN_I64) k_check_index<int64_t><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, o, (const int64_t *)base_of(idx), size, flags, skip, err);
    else k_check_index<int32_t><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, g, o, (const int32_t *)base_of(idx), size, flags, skip, err);
    CU_LAUNCHED(fn);
    return 0;
}

/* The count decides the shape, so the host needs it anyway: the flags go to the host
   and the CPU backend lists them (as PyTorch, nonzero synchronises). */
static tn_tensor *cu_nonzero(tn_tensor *x) {
    if (cu_capturing) return (cu_uncapturable("nonzero (it reads the count back)"), (tn_tensor *)NULL);
    size_t nb = (size_t)tn_numel(x) * tn_dtype_size(x->dtype);
    std::vector<char> host(nb ? nb : 1);
    DevTensor h(host.data(), x->dtype, x->shape, x->ndim, TN_CPU);
    if (cu_copy(&h.t, x)) return NULL;
    tn_tensor *r = tn_get_backend(TN_CPU)->nonzero(&h.t);
    if (!r) return NULL;
    tn_scope_begin();
    tn_tensor *d = tn_retain(tn_to(r, TN_CUDA)); /* a plain reference: the caller owns it */
    tn_scope_end();
    tn_release(r);
    return d;
}

/* ======================================================================= */
/* 7. matmul (cuBLAS)                                                       */
/* ======================================================================= */
static cublasHandle_t cublas_handle(void) {
    static cublasHandle_t h;
    static std::once_flag once;
    static cublasStatus_t status;
    std::call_once(once, [] { status = cublasCreate(&h); });
    return status == CUBLAS_STATUS_SUCCESS ? h : NULL;
}
static int cublas_fail(const char *what, cublasStatus_t s) {
    return tn_error("%s: cuBLAS error %s (%s)", what, cublasGetStatusName(s), cublasGetStatusString(s));
}
/* The handle's calls go one at a time (its stream, math mode and workspace go with the call).
   From the first CUDA-graph capture on (section 9c) it has a fixed workspace, as a capture
   cannot hold cuBLAS's own allocation of one; cublasSetStream "unconditionally resets the
   cuBLAS library workspace back to the default workspace pool" (cuBLAS docs,
   cublasSetStream), so every call sets it again after the stream, as PyTorch's
   getCurrentCUDABlasHandle does. */
static std::mutex &cublas_mutex(void) {
    static std::mutex mu;
    return mu;
}
static void *cublas_graph_ws;   /* with cublas_mutex held; NULL before the first capture */
static const size_t kCublasGraphWs = (size_t)32 << 20;
/* How a [rows, cols] operand with strides (s_row, s_col) looks to column-major BLAS:
   transposed (row-major storage) with ld = s_row, or as is with ld = s_col. */
static bool blas_view(int64_t rows, int64_t cols, int64_t s_row, int64_t s_col, bool *rowmajor, int64_t *ld) {
    if (cols == 1 || s_col == 1) { /* row-major: ld = the row stride */
        *rowmajor = true;
        *ld = rows == 1 ? (cols > 1 ? cols : 1) : s_row;
        if (*ld >= (cols > 1 ? cols : 1)) return true;
    }
    if (rows == 1 || s_row == 1) { /* column-major: ld = the column stride */
        *rowmajor = false;
        *ld = cols == 1 ? (rows > 1 ? rows : 1) : s_col;
        if (*ld >= (rows > 1 ? rows : 1)) return true;
    }
    return false;
}
/* plain kernel for float layouts BLAS cannot take (e.g. an expanded operand) and, with
   U the unsigned accumulator, the integer dtypes: they wrap as the CPU's do */
template <class T, class U> __global__ void k_matmul(int64_t B, int64_t M, int64_t N, int64_t K, const T *a, const T *b, T *c,
                                                     int64_t sa0, int64_t sa1, int64_t sa2, int64_t sb0, int64_t sb1, int64_t sb2,
                                                     int64_t sc0, int64_t sc1, int64_t sc2, double alpha, double beta) {
    GRID_LOOP(i, B * M * N) {
        int64_t n = i % N, m = (i / N) % M, bi = i / (N * M);
        U acc = 0;
        for (int64_t k = 0; k < K; k++) acc += (U)a[bi * sa0 + m * sa1 + k * sa2] * (U)b[bi * sb0 + k * sb1 + n * sb2];
        T *cp = c + bi * sc0 + m * sc1 + n * sc2;
        if (IsFloat<T>::v) *cp = beta == 0 ? (T)(alpha * (double)acc) : (T)(alpha * (double)acc + beta * (double)*cp);
        else *cp = (T)((U)(int64_t)alpha * acc + (beta == 0 ? (U)0 : (U)(int64_t)beta * (U)*cp));
    }
}
/* complex: tn__cplx sums in double */
template <class R> __global__ void k_matmul_cx(int64_t B, int64_t M, int64_t N, int64_t K, const Cx<R> *a, const Cx<R> *b, Cx<R> *c,
                                               int64_t sa0, int64_t sa1, int64_t sa2, int64_t sb0, int64_t sb1, int64_t sb2,
                                               int64_t sc0, int64_t sc1, int64_t sc2, double alpha, double beta) {
    GRID_LOOP(i, B * M * N) {
        int64_t n = i % N, m = (i / N) % M, bi = i / (N * M);
        tn__cplx acc = tn__cx(0, 0);
        for (int64_t k = 0; k < K; k++) acc = tn__cadd(acc, tn__cmul(cx_d(a[bi * sa0 + m * sa1 + k * sa2]), cx_d(b[bi * sb0 + k * sb1 + n * sb2])));
        Cx<R> *cp = c + bi * sc0 + m * sc1 + n * sc2;
        acc = tn__cscale(acc, alpha);
        *cp = cx_r<R>(beta == 0 ? acc : tn__cadd(acc, tn__cscale(cx_d(*cp), beta)));
    }
}
#define CU_MATMUL_PLAIN(T, U) k_matmul<T, U><<<blocks_for(B * M * N), kThreads, 0, cu_stream()>>>(B, M, N, K, (const T *)base_of(a), (const T *)base_of(bm), \
    (T *)base_of(c), a->strides[0], a->strides[1], a->strides[2], bm->strides[0], bm->strides[1], bm->strides[2], \
    c->strides[0], c->strides[1], c->strides[2], alpha, beta)
/* An operand whose matrices BLAS cannot take (both strides past 1: a transposed view of a
   permuted batch) as a packed copy in scratch, as PyTorch makes one; a broadcast batch
   (stride 0) is copied once and stays broadcast. NULL with the error set. */
static tn_tensor *blas_pack(tn_tensor *t, Scratch &sc, std::vector<DevTensor> &keep) {
    const bool bcast = t->strides[0] == 0;
    const int64_t shape[3] = {bcast ? 1 : t->shape[0], t->shape[1], t->shape[2]};
    void *p = sc.get((size_t)(shape[0] * shape[1] * shape[2]) * tn_dtype_size(t->dtype));
    if (!p) return NULL;
    keep.emplace_back(p, t->dtype, shape, 3, TN_CUDA);
    DevTensor &d = keep.back();
    tn_tensor src = *t;   /* the first matrix alone when broadcast */
    src.shape[0] = shape[0];
    if (dev_copy(&d.t, &src)) return NULL;
    d.t.shape[0] = t->shape[0];
    if (bcast) d.t.strides[0] = 0;
    return &d.t;
}
static int cu_matmul(tn_tensor *c, tn_tensor *a, tn_tensor *bm, double alpha, double beta) {
    const char *fn = "matmul";
    int64_t B = c->shape[0], M = c->shape[1], N = c->shape[2], K = a->shape[2];
    if (B == 0 || M == 0 || N == 0) return 0;
    const bool half = c->dtype == TN_F16 || c->dtype == TN_BF16;   /* the header passes half only when a, bm, c share it */
    const bool cplx = c->dtype == TN_C64 || c->dtype == TN_C128;   /* cublasCgemm / cublasZgemm */
    bool fl = c->dtype == TN_F32 || c->dtype == TN_F64 || half || cplx;
    bool ar, br, cr;
    int64_t lda, ldb, ldc;
    Scratch sc;
    std::vector<DevTensor> keep;
    keep.reserve(2);   /* the packed operands' headers: no reallocation moves them */
    if (fl && K > 0) {
        if (!blas_view(M, K, a->strides[1], a->strides[2], &ar, &lda) && !(a = blas_pack(a, sc, keep))) return -1;
        if (!blas_view(K, N, bm->strides[1], bm->strides[2], &br, &ldb) && !(bm = blas_pack(bm, sc, keep))) return -1;
    }
    bool ok = fl && K > 0 && blas_view(M, K, a->strides[1], a->strides[2], &ar, &lda) && blas_view(K, N, bm->strides[1], bm->strides[2], &br, &ldb) &&
              blas_view(M, N, c->strides[1], c->strides[2], &cr, &ldc) && (B == 1 || c->strides[0] != 0) &&
              M <= INT32_MAX && N <= INT32_MAX && K <= INT32_MAX && lda <= INT32_MAX && ldb <= INT32_MAX && ldc <= INT32_MAX;
    if ((!ok || B > INT32_MAX) && half) return 1;   /* declined: the header stages the operands in float32 */
    if (!ok || B > INT32_MAX) { /* integers, K = 0, or layouts (or batch counts) BLAS cannot take */
        switch (c->dtype) {
        case TN_F32: CU_MATMUL_PLAIN(float, double); break;
        case TN_F64: CU_MATMUL_PLAIN(double, double); break;
        case TN_I32: CU_MATMUL_PLAIN(int32_t, uint32_t); break;
        case TN_I64: CU_MATMUL_PLAIN(int64_t, uint64_t); break;
        case TN_U8: CU_MATMUL_PLAIN(uint8_t, uint8_t); break;
        case TN_C64: case TN_C128:
            if (c->dtype == TN_C64)
                k_matmul_cx<float><<<blocks_for(B * M * N), kThreads, 0, cu_stream()>>>(B, M, N, K, (const c64 *)base_of(a), (const c64 *)base_of(bm), (c64 *)base_of(c), a->strides[0],
                                                                        a->strides[1], a->strides[2], bm->strides[0], bm->strides[1], bm->strides[2],
                                                                        c->strides[0], c->strides[1], c->strides[2], alpha, beta);
            else
                k_matmul_cx<double><<<blocks_for(B * M * N), kThreads, 0, cu_stream()>>>(B, M, N, K, (const c128 *)base_of(a), (const c128 *)base_of(bm), (c128 *)base_of(c), a->strides[0],
                                                                         a->strides[1], a->strides[2], bm->strides[0], bm->strides[1], bm->strides[2],
                                                                         c->strides[0], c->strides[1], c->strides[2], alpha, beta);
            break;
        default: return tn_error("%s: not implemented for dtype %s", fn, tn_dtype_name(c->dtype));
        }
        CU_LAUNCHED(fn);
        return 0;
    }
    cublasHandle_t h = cublas_handle();
    if (!h) return tn_error("matmul: cuBLAS could not be initialised (cublasCreate failed)");
    std::lock_guard<std::mutex> lock(cublas_mutex());   /* one handle for all threads: its math mode and the call go together */
    cublasSetStream(h, cu_stream());   /* the legacy stream, or a capture's (section 9c): the call's too */
    if (cublas_graph_ws) {   /* cublasSetStream dropped it (above) */
        const cublasStatus_t ws_s = cublasSetWorkspace(h, cublas_graph_ws, kCublasGraphWs);
        if (ws_s != CUBLAS_STATUS_SUCCESS) return cublas_fail("matmul (cublasSetWorkspace)", ws_s);
    }
    cublasSetMathMode(h, c->dtype == TN_F32 && tn_get_tf32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);   /* matmul's switch, not cuDNN's */
    /* Column-major BLAS computes C^T = B^T A^T when C is row-major: then BLAS's first
       operand is bm and its second a. For a column-major C it computes C = A B. */
    const void *p1, *p2;
    cublasOperation_t o1, o2;
    int64_t m_, n_, ld1, ld2, s1, s2;
    if (cr) { m_ = N; n_ = M; p1 = base_of(bm); p2 = base_of(a); o1 = br ? CUBLAS_OP_N : CUBLAS_OP_T; o2 = ar ? CUBLAS_OP_N : CUBLAS_OP_T;
              ld1 = ldb; ld2 = lda; s1 = bm->strides[0]; s2 = a->strides[0]; }
    else { m_ = M; n_ = N; p1 = base_of(a); p2 = base_of(bm); o1 = ar ? CUBLAS_OP_T : CUBLAS_OP_N; o2 = br ? CUBLAS_OP_T : CUBLAS_OP_N;
           ld1 = lda; ld2 = ldb; s1 = a->strides[0]; s2 = bm->strides[0]; }
    cublasStatus_t s;
    if (half) {   /* PyTorch's half GEMM: 16-bit operands and result, float32 accumulation (tensor cores) */
        const cudaDataType_t dt = c->dtype == TN_F16 ? CUDA_R_16F : CUDA_R_16BF;
        float al = (float)alpha, be = (float)beta;
        s = cublasGemmStridedBatchedEx(h, o1, o2, (int)m_, (int)n_, (int)K, &al, p1, dt, (int)ld1, s1, p2, dt, (int)ld2, s2,
                                       &be, base_of(c), dt, (int)ldc, c->strides[0], (int)B, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    } else if (c->dtype == TN_C64) {
        const cuComplex al = make_cuComplex((float)alpha, 0), be = make_cuComplex((float)beta, 0);
        s = cublasCgemmStridedBatched(h, o1, o2, (int)m_, (int)n_, (int)K, &al, (const cuComplex *)p1, (int)ld1, s1, (const cuComplex *)p2, (int)ld2, s2,
                                      &be, (cuComplex *)base_of(c), (int)ldc, c->strides[0], (int)B);
    } else if (c->dtype == TN_C128) {
        const cuDoubleComplex al = make_cuDoubleComplex(alpha, 0), be = make_cuDoubleComplex(beta, 0);
        s = cublasZgemmStridedBatched(h, o1, o2, (int)m_, (int)n_, (int)K, &al, (const cuDoubleComplex *)p1, (int)ld1, s1, (const cuDoubleComplex *)p2, (int)ld2,
                                      s2, &be, (cuDoubleComplex *)base_of(c), (int)ldc, c->strides[0], (int)B);
    } else if (c->dtype == TN_F32) {
        float al = (float)alpha, be = (float)beta;
        s = cublasSgemmStridedBatched(h, o1, o2, (int)m_, (int)n_, (int)K, &al, (const float *)p1, (int)ld1, s1, (const float *)p2, (int)ld2, s2,
                                      &be, (float *)base_of(c), (int)ldc, c->strides[0], (int)B);
    } else {
        s = cublasDgemmStridedBatched(h, o1, o2, (int)m_, (int)n_, (int)K, &alpha, (const double *)p1, (int)ld1, s1, (const double *)p2, (int)ld2, s2,
                                      &beta, (double *)base_of(c), (int)ldc, c->strides[0], (int)B);
    }
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_fail("matmul", s);
    return 0;
}

/* ---- linear algebra (cuSOLVER): tn_backend.linalg's factorizations ----
   The header hands over contiguous [B, n, m] batches of column-major m x n matrices (LAPACK's
   layout, src/api.h) and reads info back itself, turning it into the CPU path's messages.
   One cusolverDn handle per device, on the legacy default stream as every kernel here (so
   its work is ordered with theirs); its calls serialised, as a handle serves one thread at a
   time. float32, float64, complex64 and complex128 (the complex routines are the Hermitian
   ones: heevd, ungqr, unmqr with Q^H for the transposed product, potrf's A = L L^H; gesvdj's
   V conjugated into V^H). Workspaces come from the caching allocator. potrf is batched (potrfBatched); getrf,
   getrs, geqrf + orgqr, syevd, gesvdj, ormqr and Xgeev run a loop over the batch; the
   triangular solve is cuBLAS's trsm (trsmBatched for small triangles). */
static std::mutex &solver_mutex(void) {
    static std::mutex mu;
    return mu;
}
/* one handle of a library per device, made on first use by create (with solver_mutex held) */
template <class H, class St> static H per_device_handle(St (*create)(H *), St ok) {
    static std::map<int, H> handles;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) { (void)cudaGetLastError(); return NULL; }
    auto it = handles.find(dev);
    if (it != handles.end()) return it->second;
    H h = NULL;
    if (create(&h) != ok) return NULL;
    handles[dev] = h;
    return h;
}
static cusolverDnHandle_t solver_handle(void) { return per_device_handle(cusolverDnCreate, CUSOLVER_STATUS_SUCCESS); }
/* cuBLAS for the triangular solve (trsm): a handle per device too (matmul's is one for the
   process), used with solver_mutex held, on the legacy default stream, alpha on the host */
static cublasHandle_t solver_blas_handle(void) { return per_device_handle(cublasCreate, CUBLAS_STATUS_SUCCESS); }
static int solver_fail(const char *what, cusolverStatus_t s) { return tn_error("linalg (%s): cuSOLVER error %d", what, (int)s); }
#define SOLVER_CHECK(what, call) do { cusolverStatus_t s_ = (call); if (s_ != CUSOLVER_STATUS_SUCCESS) return solver_fail(what, s_); } while (0)
/* float, double, complex64 and complex128 overloads of the routines (S, D, C, Z): the complex
   ones are LAPACK's Hermitian names (ungqr, unmqr, heevd), their eigenvalues and singular
   values real (R) */
#define SOLVER_OVERLOADS(T, R, X, ORG, ORM, EV, ONE) \
    static cusolverStatus_t getrf_ws(cusolverDnHandle_t h, int m, int n, T *a, int lda, int *lw) { return cusolverDn##X##getrf_bufferSize(h, m, n, a, lda, lw); } \
    static cusolverStatus_t getrf(cusolverDnHandle_t h, int m, int n, T *a, int lda, T *ws, int *piv, int *info) { return cusolverDn##X##getrf(h, m, n, a, lda, ws, piv, info); } \
    static cusolverStatus_t getrs(cusolverDnHandle_t h, int n, int r, const T *a, int lda, const int *piv, T *b, int ldb, int *info) { \
        return cusolverDn##X##getrs(h, CUBLAS_OP_N, n, r, a, lda, piv, b, ldb, info); } \
    static cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, T **a, int lda, int *info, int batch) { \
        return cusolverDn##X##potrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, info, batch); } \
    static cusolverStatus_t geqrf_ws(cusolverDnHandle_t h, int m, int n, T *a, int lda, int *lw) { return cusolverDn##X##geqrf_bufferSize(h, m, n, a, lda, lw); } \
    static cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, T *a, int lda, T *tau, T *ws, int lw, int *info) { \
        return cusolverDn##X##geqrf(h, m, n, a, lda, tau, ws, lw, info); } \
    static cusolverStatus_t orgqr_ws(cusolverDnHandle_t h, int m, int n, int k, const T *a, int lda, const T *tau, int *lw) { \
        return cusolverDn##X##ORG##_bufferSize(h, m, n, k, a, lda, tau, lw); } \
    static cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, T *a, int lda, const T *tau, T *ws, int lw, int *info) { \
        return cusolverDn##X##ORG(h, m, n, k, a, lda, tau, ws, lw, info); } \
    static cusolverStatus_t syevd_ws(cusolverDnHandle_t h, cusolverEigMode_t jobz, int n, const T *a, int lda, const R *w, int *lw) { \
        return cusolverDn##X##EV##_bufferSize(h, jobz, CUBLAS_FILL_MODE_LOWER, n, a, lda, w, lw); } \
    static cusolverStatus_t syevd(cusolverDnHandle_t h, cusolverEigMode_t jobz, int n, T *a, int lda, R *w, T *ws, int lw, int *info) { \
        return cusolverDn##X##EV(h, jobz, CUBLAS_FILL_MODE_LOWER, n, a, lda, w, ws, lw, info); } \
    static cusolverStatus_t gesvdj_ws(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, const T *a, const R *s, const T *u, \
                                      const T *v, int *lw, gesvdjInfo_t p) { \
        return cusolverDn##X##gesvdj_bufferSize(h, jobz, econ, m, n, a, m, s, u, m, v, n, lw, p); } \
    static cusolverStatus_t gesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, T *a, R *s, T *u, T *v, T *ws, int lw, \
                                   int *info, gesvdjInfo_t p) { \
        return cusolverDn##X##gesvdj(h, jobz, econ, m, n, a, m, s, u, m, v, n, ws, lw, info, p); } \
    static cusolverStatus_t ormqr_ws(cusolverDnHandle_t h, cublasSideMode_t side, cublasOperation_t tr, int m, int n, int k, const T *a, int lda, \
                                     const T *tau, const T *c, int ldc, int *lw) { \
        return cusolverDn##X##ORM##_bufferSize(h, side, tr, m, n, k, a, lda, tau, c, ldc, lw); } \
    static cusolverStatus_t ormqr(cusolverDnHandle_t h, cublasSideMode_t side, cublasOperation_t tr, int m, int n, int k, const T *a, int lda, \
                                  const T *tau, T *c, int ldc, T *ws, int lw, int *info) { \
        return cusolverDn##X##ORM(h, side, tr, m, n, k, a, lda, tau, c, ldc, ws, lw, info); } \
    static cusolverStatus_t sytrf_ws(cusolverDnHandle_t h, int n, T *a, int *lw) { return cusolverDn##X##sytrf_bufferSize(h, n, a, n, lw); } \
    static cusolverStatus_t sytrf(cusolverDnHandle_t h, int n, T *a, int *piv, T *ws, int lw, int *info) { \
        return cusolverDn##X##sytrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, piv, ws, lw, info); } \
    static cublasStatus_t trsm(cublasHandle_t h, cublasFillMode_t up, cublasDiagType_t dg, int n, int r, const T *a, T *b) { \
        const T one = ONE; \
        return cublas##X##trsm(h, CUBLAS_SIDE_LEFT, up, CUBLAS_OP_N, dg, n, r, &one, a, n, b, n); } \
    static cublasStatus_t trsm_batched(cublasHandle_t h, cublasFillMode_t up, cublasDiagType_t dg, int n, int r, T **a, T **b, int batch) { \
        const T one = ONE; \
        return cublas##X##trsmBatched(h, CUBLAS_SIDE_LEFT, up, CUBLAS_OP_N, dg, n, r, &one, a, n, b, n, batch); }
SOLVER_OVERLOADS(float, float, S, orgqr, ormqr, syevd, 1.0f)
SOLVER_OVERLOADS(double, double, D, orgqr, ormqr, syevd, 1.0)
SOLVER_OVERLOADS(cuComplex, float, C, ungqr, unmqr, heevd, make_cuComplex(1.0f, 0.0f))
SOLVER_OVERLOADS(cuDoubleComplex, double, Z, ungqr, unmqr, heevd, make_cuDoubleComplex(1.0, 0.0))
#undef SOLVER_OVERLOADS
/* a solver type's real type (its eigenvalues', singular values'), whether it is complex, and
   its cudaDataType (the 64-bit API's Xsytrs) */
template <class T> struct LaType;
template <> struct LaType<float> { typedef float R; static const bool cx = false; static constexpr cudaDataType dt = CUDA_R_32F; };
template <> struct LaType<double> { typedef double R; static const bool cx = false; static constexpr cudaDataType dt = CUDA_R_64F; };
template <> struct LaType<cuComplex> { typedef float R; static const bool cx = true; static constexpr cudaDataType dt = CUDA_C_32F; };
template <> struct LaType<cuDoubleComplex> { typedef double R; static const bool cx = true; static constexpr cudaDataType dt = CUDA_C_64F; };
/* Xsytrs's pivots are int64: the entry's int32 ones widened */
__global__ void k_piv_i64(int64_t *out, const int *in, int64_t n) {
    GRID_LOOP(i, n) out[i] = in[i];
}
struct HostWork {   /* a host workspace (Xgeev's, Xsytrs's), kept until the calls that use it are done */
    std::vector<char> v;
    ~HostWork() { (void)cudaStreamSynchronize(0); }
};
/* x <- conj(x) in place: n complex values as (re, im) pairs of R */
template <class R> __global__ void k_conj_inplace(R *x, int64_t n) {
    GRID_LOOP(i, n) x[2 * i + 1] = -x[2 * i + 1];
}
template <class T> __global__ void k_batch_ptrs(T **out, T *base, int64_t stride, int64_t B) {
    GRID_LOOP(i, B) out[i] = base + i * stride;
}
struct GesvdjParams {   /* gesvdj's settings (the defaults: tolerance eps, 100 sweeps, sorted values) */
    gesvdjInfo_t p = NULL;
    ~GesvdjParams() { if (p) cusolverDnDestroyGesvdjInfo(p); }
};
template <class T> static int la_solver(tn_linalg_op op, tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_tensor *p, tn_tensor *info, int flag) {
    typedef typename LaType<T>::R R;
    const int64_t B = a->shape[0];
    const int n = (int)a->shape[1], m = (int)a->shape[2], k = m < n ? m : n;
    const int64_t mn = (int64_t)m * n;
    T *A = (T *)tn_data_ptr(a);
    int *fv = info ? (int *)tn_data_ptr(info) : NULL;
    Scratch sc;
    std::lock_guard<std::mutex> lock(solver_mutex());
    cusolverDnHandle_t h = solver_handle();
    if (!h) return tn_error("linalg: cuSOLVER could not be initialised (cusolverDnCreate failed)");
    int *dinfo = (int *)sc.get(sizeof(int));   /* the routines' info where the header wants none */
    if (!dinfo) return -1;
    switch (op) {
    case TN_LA_GETRF: {
        int lw = 0;
        SOLVER_CHECK("getrf", getrf_ws(h, m, n, A, m, &lw));
        T *ws = (T *)sc.get((size_t)lw * sizeof(T));
        int *pv = (int *)tn_data_ptr(p);
        if (!ws) return -1;
        for (int64_t i = 0; i < B; i++) SOLVER_CHECK("getrf", getrf(h, m, n, A + i * mn, m, ws, pv + i * k, fv + i));
        return 0;
    }
    case TN_LA_GETRS: {
        const int r = (int)b->shape[1];
        T *X = (T *)tn_data_ptr(b);
        const int *pv = (const int *)tn_data_ptr(p);
        for (int64_t i = 0; i < B && r > 0; i++) SOLVER_CHECK("getrs", getrs(h, n, r, A + i * mn, n, pv + i * n, X + i * n * r, n, dinfo));
        return 0;
    }
    case TN_LA_POTRF: {
        T **ptrs = (T **)sc.get((size_t)B * sizeof(T *));
        if (!ptrs) return -1;
        k_batch_ptrs<T><<<blocks_for(B), kThreads, 0, cu_stream()>>>(ptrs, A, mn, B);
        CU_LAUNCHED("linalg (potrf)");
        SOLVER_CHECK("potrf", potrf_batched(h, n, ptrs, n, fv, (int)B));
        return 0;
    }
    case TN_LA_GEQRF: {
        T *tau = (T *)tn_data_ptr(b), *Q = c ? (T *)tn_data_ptr(c) : NULL;
        const int qc = c ? (int)c->shape[1] : 0;
        int lw = 0, lw2 = 0;
        SOLVER_CHECK("geqrf", geqrf_ws(h, m, n, A, m, &lw));
        if (Q && qc > 0) SOLVER_CHECK("orgqr", orgqr_ws(h, m, qc, k, Q, m, tau, &lw2));
        T *ws = (T *)sc.get((size_t)(lw > lw2 ? lw : lw2) * sizeof(T));
        if (!ws) return -1;
        for (int64_t i = 0; i < B; i++) {
            SOLVER_CHECK("geqrf", geqrf(h, m, n, A + i * mn, m, tau + i * k, ws, lw, dinfo));
            if (!Q || qc == 0) continue;
            /* orgqr reads the reflectors from Q's first k columns (the rest it sets itself) */
            CU_CHECK("linalg (orgqr)", cudaMemcpyAsync(Q + i * qc * m, A + i * mn, (size_t)(qc < n ? qc : n) * m * sizeof(T), cudaMemcpyDeviceToDevice, 0));
            SOLVER_CHECK("orgqr", orgqr(h, m, qc, k, Q + i * qc * m, m, tau + i * k, ws, lw, dinfo));
        }
        return 0;
    }
    case TN_LA_SYEVD: {
        const cusolverEigMode_t jobz = flag ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        R *W = (R *)tn_data_ptr(b);   /* (complex: heevd, the values real) */
        int lw = 0;
        SOLVER_CHECK("syevd", syevd_ws(h, jobz, n, A, n, W, &lw));
        T *ws = (T *)sc.get((size_t)lw * sizeof(T));
        if (!ws) return -1;
        for (int64_t i = 0; i < B; i++) SOLVER_CHECK("syevd", syevd(h, jobz, n, A + i * mn, n, W + i * n, ws, lw, fv + i));
        return 0;
    }
    case TN_LA_GESVD: {
        /* gesvdj (any m, n; LAPACK's gesvd in cuSOLVER takes m >= n only): econ 0 gives the
           full U (m x m) and V (n x n); it writes V, which [B, vr, n] holds as V^T row-major
           (complex: conjugated after, V^H as the contract says) */
        const bool vec = c != NULL;
        const int uc = vec ? (int)c->shape[1] : k, vr = vec ? (int)p->shape[1] : k, econ = uc == k && vr == k ? 1 : 0;
        const cusolverEigMode_t jobz = vec ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        R *S = (R *)tn_data_ptr(b);
        T *U = vec ? (T *)tn_data_ptr(c) : (T *)sc.get((size_t)m * k * sizeof(T)), *V = vec ? (T *)tn_data_ptr(p) : (T *)sc.get((size_t)n * k * sizeof(T));
        GesvdjParams gp;
        SOLVER_CHECK("gesvdj", cusolverDnCreateGesvdjInfo(&gp.p));
        int lw = 0;
        if (!U || !V) return -1;
        SOLVER_CHECK("gesvdj", gesvdj_ws(h, jobz, econ, m, n, A, S, U, V, &lw, gp.p));
        T *ws = (T *)sc.get((size_t)lw * sizeof(T));
        if (!ws) return -1;
        for (int64_t i = 0; i < B; i++)
            SOLVER_CHECK("gesvdj", gesvdj(h, jobz, econ, m, n, A + i * mn, S + i * k, vec ? U + i * (int64_t)m * uc : U, vec ? V + i * (int64_t)n * vr : V, ws, lw,
                                          fv + i, gp.p));
        if (vec && LaType<T>::cx) {
            const int64_t nv = B * (int64_t)n * vr;
            k_conj_inplace<R><<<blocks_for(nv), kThreads, 0, cu_stream()>>>((R *)V, nv);
            CU_LAUNCHED("linalg (gesvdj)");
        }
        return 0;
    }
    case TN_LA_TRSM: {
        /* trsmBatched for small triangles (its pointer arrays built on the device); a loop of
           trsm above, as cuBLAS advises for larger ones */
        const int r = (int)b->shape[1];
        T *X = (T *)tn_data_ptr(b);
        cublasHandle_t bh = solver_blas_handle();
        if (!bh) return tn_error("linalg: cuBLAS could not be initialised (cublasCreate failed)");
        const cublasFillMode_t up = flag & 1 ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
        const cublasDiagType_t dg = flag & 2 ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
        if (r == 0) return 0;
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        if (n <= 64 && B > 1) {
            T **ptrs = (T **)sc.get(2 * (size_t)B * sizeof(T *));
            if (!ptrs) return -1;
            k_batch_ptrs<T><<<blocks_for(B), kThreads, 0, cu_stream()>>>(ptrs, A, mn, B);
            k_batch_ptrs<T><<<blocks_for(B), kThreads, 0, cu_stream()>>>(ptrs + B, X, (int64_t)n * r, B);
            CU_LAUNCHED("linalg (trsm)");
            st = trsm_batched(bh, up, dg, n, r, ptrs, ptrs + B, (int)B);
        } else
            for (int64_t i = 0; i < B && st == CUBLAS_STATUS_SUCCESS; i++) st = trsm(bh, up, dg, n, r, A + i * mn, X + i * (int64_t)n * r);
        return st == CUBLAS_STATUS_SUCCESS ? 0 : cublas_fail("linalg (trsm)", st);
    }
    case TN_LA_ORMQR: {
        /* the reflectors q x k (q = m here, k = n); c q x r (left) or r x q (right), column-major */
        const bool left = flag & 1;
        const cublasSideMode_t side = left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
        const cublasOperation_t tr = !(flag & 2) ? CUBLAS_OP_N : LaType<T>::cx ? CUBLAS_OP_C : CUBLAS_OP_T;   /* (unmqr: Q^H) */
        const int q = m, kr = n, cm = left ? q : (int)c->shape[2], cn = left ? (int)c->shape[1] : q;
        const T *tau = (const T *)tn_data_ptr(b);
        T *C = (T *)tn_data_ptr(c);
        if (cm == 0 || cn == 0) return 0;
        int lw = 0;
        SOLVER_CHECK("ormqr", ormqr_ws(h, side, tr, cm, cn, kr, A, q, tau, C, cm, &lw));
        T *ws = (T *)sc.get((size_t)lw * sizeof(T));
        if (!ws) return -1;
        for (int64_t i = 0; i < B; i++)
            SOLVER_CHECK("ormqr", ormqr(h, side, tr, cm, cn, kr, A + i * mn, q, tau + i * kr, C + i * (int64_t)cm * cn, cm, ws, lw, dinfo));
        return 0;
    }
    case TN_LA_SYTRF: {   /* Bunch-Kaufman (LAPACK's pivots), symmetric for complex too */
        int lw = 0;
        SOLVER_CHECK("sytrf", sytrf_ws(h, n, A, &lw));
        T *ws = (T *)sc.get((size_t)(lw > 0 ? lw : 1) * sizeof(T));
        int *pv = (int *)tn_data_ptr(p);
        if (!ws) return -1;
        for (int64_t i = 0; i < B; i++) SOLVER_CHECK("sytrf", sytrf(h, n, A + i * mn, pv + i * n, ws, lw, fv + i));
        return 0;
    }
    case TN_LA_SYTRS: {   /* the 64-bit API's Xsytrs (no sytrs in the legacy one), as PyTorch */
        const int64_t r = b->shape[1], np = B * (int64_t)n;
        T *X = (T *)tn_data_ptr(b);
        int64_t *p64 = (int64_t *)sc.get((size_t)np * sizeof(int64_t));
        if (!p64) return -1;
        if (r == 0) return 0;
        k_piv_i64<<<blocks_for(np), kThreads, 0, cu_stream()>>>(p64, (const int *)tn_data_ptr(p), np);
        CU_LAUNCHED("linalg (sytrs)");
        size_t dws = 0, hws = 0;
        const cudaDataType dt = LaType<T>::dt;
        SOLVER_CHECK("sytrs", cusolverDnXsytrs_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, r, dt, A, n, p64, dt, X, n, &dws, &hws));
        void *dw = sc.get(dws ? dws : 1);
        HostWork hw;
        hw.v.resize(hws ? hws : 1);
        if (!dw) return -1;
        for (int64_t i = 0; i < B; i++)
            SOLVER_CHECK("sytrs", cusolverDnXsytrs(h, CUBLAS_FILL_MODE_LOWER, n, r, dt, A + i * mn, n, p64 + i * n, dt, X + i * n * r, n, dw, dws, hw.v.data(), hws, dinfo));
        return 0;
    }
    case TN_LA_GEEV: break;   /* (la_geev) */
    }
    return tn_error("linalg: unknown op %d", (int)op);
}
/* GEEV: cusolverDnXgeev (CUDA 12.6+), a loop over the batch; right vectors only (jobvl
   NOVECTOR, as torch.linalg.eig). A complex a: W and VR complex (its CGEEV/ZGEEV). A real a:
   W complex (Xgeev's mixed mode: each conjugate pair as two values, in real arithmetic), VR
   real in LAPACK's packing (a pair w_j, w_j+1 = conj(w_j), positive imaginary part first, has
   columns x, y for the vectors x + iy and x - iy), unpacked into c by k_geev_unpack. Xgeev
   normalises as geev (norm 1, the largest component real); its order is its Schur form's. */
template <class R> __global__ void k_geev_unpack(Cx<R> *v, const R *vr, const Cx<R> *w, int64_t n) {
    GRID_LOOP(i, n * n) {   /* i = j n + r: row r of column j */
        const int64_t j = i / n;
        const R im = w[j].im;
        if (im > 0 && j + 1 < n) v[i] = mk_cx<R>(vr[i], vr[i + n]);
        else if (im < 0 && j > 0) v[i] = mk_cx<R>(vr[i - n], -vr[i]);
        else v[i] = mk_cx<R>(vr[i], 0);
    }
}
struct DnParams {   /* Xgeev's settings (the defaults) */
    cusolverDnParams_t p = NULL;
    ~DnParams() { if (p) cusolverDnDestroyParams(p); }
};
static int la_geev(tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_tensor *info, int flag) {
    const bool vec = flag != 0, cx = a->dtype == TN_C64 || a->dtype == TN_C128, dbl = a->dtype == TN_F64 || a->dtype == TN_C128;
    const tn_dtype cdt = dbl ? TN_C128 : TN_C64;
    const int64_t B = a->shape[0], n = a->shape[1];
    if (a->shape[2] != n || !b || !info || b->dtype != cdt || b->ndim != 2 || b->shape[1] != n || (vec && (!c || c->dtype != cdt || c->shape[1] != n || c->shape[2] != n)))
        return tn_error("linalg (geev): takes a [B, n, n], b [B, n] and (flag 1) c [B, n, n], both %s", tn_dtype_name(cdt));
#if CUDART_VERSION < 12060
    (void)B;
    return tn_error("linalg.eig: cusolverDnXgeev needs CUDA 12.6 or later (this unit was built with CUDA %d.%d)", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
#else
    const cudaDataType ta = cx ? (dbl ? CUDA_C_64F : CUDA_C_32F) : (dbl ? CUDA_R_64F : CUDA_R_32F), tw = dbl ? CUDA_C_64F : CUDA_C_32F;
    const size_t ea = tn_dtype_size(a->dtype), ew = tn_dtype_size(cdt);
    const cusolverEigMode_t jobvr = vec ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    char *A = (char *)tn_data_ptr(a), *W = (char *)tn_data_ptr(b), *C = vec ? (char *)tn_data_ptr(c) : NULL;
    Scratch sc;
    std::lock_guard<std::mutex> lock(solver_mutex());
    cusolverDnHandle_t h = solver_handle();
    if (!h) return tn_error("linalg: cuSOLVER could not be initialised (cusolverDnCreate failed)");
    DnParams prm;
    SOLVER_CHECK("geev", cusolverDnCreateParams(&prm.p));
    /* VL is not referenced (NOVECTOR), nor VR without vectors: a small block for each; a real
       a's packed vectors go through one matrix of scratch */
    void *VL = sc.get(ew), *VR = vec && !cx ? sc.get((size_t)(n * n) * ea) : sc.get(ew);
    if (!VL || !VR) return -1;
    size_t dws = 0, hws = 0;
    SOLVER_CHECK("geev", cusolverDnXgeev_bufferSize(h, prm.p, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, ta, A, n, tw, W, ta, VL, 1, ta, vec && cx ? (void *)C : VR, n, ta,
                                                   &dws, &hws));
    void *dw = sc.get(dws);
    HostWork hw;
    hw.v.resize(hws ? hws : 1);
    int *fv = (int *)tn_data_ptr(info);
    if (!dw) return -1;
    for (int64_t i = 0; i < B; i++) {
        void *vr = vec && cx ? (void *)(C + (size_t)(i * n * n) * ew) : VR;
        SOLVER_CHECK("geev", cusolverDnXgeev(h, prm.p, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, ta, A + (size_t)(i * n * n) * ea, n, tw, W + (size_t)(i * n) * ew, ta, VL, 1,
                                            ta, vr, n, ta, dw, dws, hw.v.data(), hws, fv + i));
        if (!vec || cx) continue;
        Cx<float> *v32 = (Cx<float> *)(C + (size_t)(i * n * n) * ew);
        Cx<double> *v64 = (Cx<double> *)v32;
        if (dbl) k_geev_unpack<double><<<blocks_for(n * n), kThreads, 0, 0>>>(v64, (const double *)VR, (const Cx<double> *)(W + (size_t)(i * n) * ew), n);
        else k_geev_unpack<float><<<blocks_for(n * n), kThreads, 0, 0>>>(v32, (const float *)VR, (const Cx<float> *)(W + (size_t)(i * n) * ew), n);
        CU_LAUNCHED("linalg (geev)");
    }
    return 0;
#endif
}
static int cu_linalg(tn_linalg_op op, tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_tensor *p, tn_tensor *info, int flag) {
    CU_NO_CAPTURE("a factorization (linalg)");   /* cuSOLVER does not support stream capture; its handle runs on the legacy stream */
    if (a->ndim != 3 || (a->dtype != TN_F32 && a->dtype != TN_F64 && a->dtype != TN_C64 && a->dtype != TN_C128))
        return tn_error("linalg: the unit takes [B, n, m] float32/float64/complex64/complex128 batches, not %s", tn_dtype_name(a->dtype));
    tn_tensor *const more[2] = {b && b->ndim == 3 ? b : NULL, c && c->ndim == 3 ? c : NULL};   /* (TRSM's right-hand sides, ORMQR's c) */
    bool big = a->shape[0] > INT32_MAX || a->shape[1] > INT32_MAX || a->shape[2] > INT32_MAX;
    for (int t = 0; t < 2; t++) big = big || (more[t] && (more[t]->shape[1] > INT32_MAX || more[t]->shape[2] > INT32_MAX));
    if (big)
        return tn_error("linalg: matrices of %lld x %lld (a batch of %lld) are past cuSOLVER's int sizes", (long long)a->shape[2], (long long)a->shape[1],
                        (long long)a->shape[0]);
    if (tn_numel(a) == 0) {   /* nothing to factor; info says so */
        if (info && tn_numel(info) > 0) CU_CHECK("linalg", cudaMemsetAsync(tn_data_ptr(info), 0, (size_t)tn_numel(info) * sizeof(int), 0));
        return 0;
    }
    if (op == TN_LA_GEEV) return la_geev(a, b, c, info, flag);
    switch (a->dtype) {
    case TN_F32: return la_solver<float>(op, a, b, c, p, info, flag);
    case TN_F64: return la_solver<double>(op, a, b, c, p, info, flag);
    case TN_C64: return la_solver<cuComplex>(op, a, b, c, p, info, flag);
    default: return la_solver<cuDoubleComplex>(op, a, b, c, p, info, flag);
    }
}
#undef SOLVER_CHECK

/* ---- fused epilogues (cuBLASLt): tn_backend.matmul_ep ----
   c = act(alpha a b + bias) in one cuBLASLt product: the bias vector and ReLU / tanh-GELU
   applied as the tiles are stored, instead of a broadcast copy of the bias into c, a GEMM
   that reads it back and an activation pass (Linear's forward, and the graph replay's
   linear + activation). As cu_matmul, row-major c is computed as c^T = b^T a^T, so the bias
   runs along the rows of cuBLASLt's D: its BIAS epilogue. The weight gradient's product can
   sum the bias gradient as it reads its operand (BGRADA/BGRADB: the bias pointer is then the
   output; derivatives.c's addmm backward). The algorithm for a case (dtype,
   sizes, layouts, epilogue, TF32, pointer alignments) is asked of cuBLASLt's heuristic once
   and kept; where it has none, the entry declines (the header runs the passes). On
   cu_stream() (a capture's stream while capturing: the product is captured with it). */
static std::atomic<int64_t> n_gemm_ep, n_gemm_ep_fallbacks;   /* tn_cuda_stats */
static std::mutex &lt_mutex(void) {
    static std::mutex mu;
    return mu;
}
static int lt_align(const void *p) {   /* the pointer's alignment in bytes, at most 256 */
    int a = 256;
    while (a > 1 && ((uintptr_t)p & (uintptr_t)(a - 1))) a >>= 1;
    return a;
}
struct LtKey {
    int dev, dtype, epi, tf32, ta, tb, align[4];
    int64_t m, n, k, lda, ldb;
    bool operator<(const LtKey &o) const { return memcmp(this, &o, sizeof o) < 0; }
};
struct LtAlgo { bool found; cublasLtMatmulAlgo_t algo; size_t workspace; };
/* the descriptors of one call, destroyed together */
struct LtDescs {
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    ~LtDescs() {
        if (pref) cublasLtMatmulPreferenceDestroy(pref);
        if (ld) cublasLtMatrixLayoutDestroy(ld);
        if (lb) cublasLtMatrixLayoutDestroy(lb);
        if (la) cublasLtMatrixLayoutDestroy(la);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};
static const size_t kLtWorkspace = (size_t)4 << 20;   /* the most workspace an algorithm may ask for */
static int cu_matmul_ep(tn_tensor *c, tn_tensor *a, tn_tensor *b, tn_tensor *bias, double alpha, int act) {
    const char *fn = "matmul (cuBLASLt epilogue)";
    const char *off = getenv("TN_CUDA_GEMM_EPILOGUE");   /* read per call: a test switches it */
    if (tn__matmul_ep_declines(off && !strcmp(off, "0"), c, a, b, bias, act)) { n_gemm_ep_fallbacks++; return 1; }
    const int64_t M = c->shape[0], N = c->shape[1], K = a->shape[1];
    bool ar, br;
    int64_t lda, ldb;
    if (!blas_view(M, K, a->strides[0], a->strides[1], &ar, &lda) || !blas_view(K, N, b->strides[0], b->strides[1], &br, &ldb)) {
        n_gemm_ep_fallbacks++;   /* the predicate's layout test and blas_view agree; kept as a guard */
        return 1;
    }
    const cudaDataType_t dt = c->dtype == TN_F16 ? CUDA_R_16F : c->dtype == TN_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const bool tf32 = c->dtype == TN_F32 && tn_get_tf32();
    /* cuBLASLt's A is our b and its B our a (below): a's row sums are its BGRADB, b's column sums its BGRADA */
    const cublasLtEpilogue_t epi = act == TN__EPI_BGRAD_A ? CUBLASLT_EPILOGUE_BGRADB : act == TN__EPI_BGRAD_B ? CUBLASLT_EPILOGUE_BGRADA
        : bias ? (act == TN__EPI_RELU ? CUBLASLT_EPILOGUE_RELU_BIAS : act == TN__EPI_GELU_TANH ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
               : (act == TN__EPI_RELU ? CUBLASLT_EPILOGUE_RELU : act == TN__EPI_GELU_TANH ? CUBLASLT_EPILOGUE_GELU : CUBLASLT_EPILOGUE_DEFAULT);
    /* cuBLASLt's A is b^T (N x K) and its B is a^T (K x M), both column-major: a row-major
       operand is its transpose read as is, a column-major one is transposed by the op */
    const cublasOperation_t ta = br ? CUBLAS_OP_N : CUBLAS_OP_T, tb = ar ? CUBLAS_OP_N : CUBLAS_OP_T;
    const uint64_t arows = br ? (uint64_t)N : (uint64_t)K, acols = br ? (uint64_t)K : (uint64_t)N;
    const uint64_t brows = ar ? (uint64_t)K : (uint64_t)M, bcols = ar ? (uint64_t)M : (uint64_t)K;
    const void *pa = base_of(b), *pb = base_of(a);
    void *pd = base_of(c);
    const void *pbias = bias ? base_of(bias) : NULL;
    std::lock_guard<std::mutex> lock(lt_mutex());
    cublasLtHandle_t h = per_device_handle(cublasLtCreate, CUBLAS_STATUS_SUCCESS);
    if (!h) return tn_error("%s: cuBLASLt could not be initialised (cublasLtCreate failed)", fn);
    LtDescs d;
    const cublasComputeType_t ct = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cublasStatus_t s = cublasLtMatmulDescCreate(&d.op, ct, CUDA_R_32F);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (s == CUBLAS_STATUS_SUCCESS && bias) s = cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &pbias, sizeof pbias);
    if (s == CUBLAS_STATUS_SUCCESS && bias) s = cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &dt, sizeof dt);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatrixLayoutCreate(&d.la, dt, arows, acols, ldb);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatrixLayoutCreate(&d.lb, dt, brows, bcols, lda);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatrixLayoutCreate(&d.ld, dt, (uint64_t)N, (uint64_t)M, N);
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_fail(fn, s);
    LtKey key;
    memset(&key, 0, sizeof key);   /* the padding too: keys compare as bytes */
    cudaGetDevice(&key.dev);
    key.dtype = (int)c->dtype; key.epi = (int)epi; key.tf32 = tf32; key.ta = (int)ta; key.tb = (int)tb;
    key.align[0] = lt_align(pa); key.align[1] = lt_align(pb); key.align[2] = lt_align(pd); key.align[3] = pbias ? lt_align(pbias) : 0;
    key.m = M; key.n = N; key.k = K; key.lda = lda; key.ldb = ldb;
    static std::map<LtKey, LtAlgo> algos;
    auto it = algos.find(key);
    if (it == algos.end()) {
        LtAlgo found;
        memset(&found, 0, sizeof found);
        s = cublasLtMatmulPreferenceCreate(&d.pref);
        const uint64_t al[3] = {(uint64_t)key.align[0], (uint64_t)key.align[1], (uint64_t)key.align[2]};
        if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kLtWorkspace, sizeof kLtWorkspace);
        if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al[0], sizeof al[0]);
        if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al[1], sizeof al[1]);
        if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al[2], sizeof al[2]);
        if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al[2], sizeof al[2]);
        if (s != CUBLAS_STATUS_SUCCESS) return cublas_fail(fn, s);
        cublasLtMatmulHeuristicResult_t res;
        int nres = 0;
        s = cublasLtMatmulAlgoGetHeuristic(h, d.op, d.la, d.lb, d.ld, d.ld, d.pref, 1, &res, &nres);
        if (s == CUBLAS_STATUS_SUCCESS && nres > 0 && res.state == CUBLAS_STATUS_SUCCESS) {
            found.found = true;
            found.algo = res.algo;
            found.workspace = res.workspaceSize;
        } else if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_SUPPORTED) return cublas_fail(fn, s);
        it = algos.emplace(key, found).first;
    }
    if (!it->second.found) { n_gemm_ep_fallbacks++; return 1; }
    /* the workspace: one block per device, made outside a capture (an allocation inside one
       would fail it) and shared by every call, as they all run in one stream's order (the
       legacy stream, where graph launches run too) */
    static std::map<int, void *> workspaces;
    void *&ws = workspaces[key.dev];
    if (it->second.workspace && !ws) {
        if (cu_capturing) { n_gemm_ep_fallbacks++; return 1; }   /* the passes, which capture */
        if (!(ws = cu_alloc(kLtWorkspace))) return tn_error("%s: out of GPU memory for a %zu-byte workspace", fn, kLtWorkspace);
    }
    const float al = (float)alpha, be = 0.0f;
    s = cublasLtMatmul(h, d.op, &al, pa, d.la, pb, d.lb, &be, pd, d.ld, pd, d.ld, &it->second.algo, ws, it->second.workspace, cu_stream());
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_fail(fn, s);
    n_gemm_ep++;
    return 0;
}

/* ======================================================================= */
/* 8. random, sliding windows, pooling, optimizer steps                     */
/* ======================================================================= */
/* Element i from Philox(seed, offset + i) through tensor.h's tn_philox_draw: the same
   numbers as the CPU for the same generator state. */
template <class T> __device__ __forceinline__ T rand_store(double v) { return (T)v; }
template <> __device__ __forceinline__ bool rand_store<bool>(double v) { return v != 0; }
/* st (a captured draw): the graph's {seed lo, seed hi, offset lo, offset hi}, written before
   each replay (section 9c): seed from it, offset relative to its offset (PyTorch's graph-safe
   Philox, whose seed and offset a replay reads from device memory) */
template <class T> __global__ void k_random(int64_t n, T *o, int op, bool f32, uint64_t seed, uint64_t offset, double a, double b, int64_t low, uint64_t range, bool exact_i64,
                                            const int64_t *st) {
    if (st) {
        seed = (uint64_t)st[0] | (uint64_t)st[1] << 32;
        offset += (uint64_t)st[2] | (uint64_t)st[3] << 32;
    }
    GRID_LOOP(i, n) {
        int64_t iv;
        double v = tn_philox_draw(op, f32, seed, offset + (uint64_t)i, a, b, low, range, &iv);
        o[i] = exact_i64 ? (T)iv : rand_store<T>(v);
    }
}
static int cu_random(tn_random_op op, tn_tensor *out, uint64_t seed, uint64_t offset, double a, double b, int64_t low, uint64_t range) {
    const char *fn = "random";
    if (cu_capturing && !cu_cap_rng) return cu_uncapturable("a random draw");   /* no counters of a graph's: a replay would draw the same numbers */
    const int64_t *st = cu_capturing ? cu_cap_rng : NULL;
    int64_t n = tn_numel(out);
    if (n == 0) return 0;
    if (!tn_is_contiguous(out)) return tn_error("random: the output must be contiguous");
    bool exact = op == RANDINT && out->dtype == TN_I64;
    CU_DISPATCH(out->dtype, T, k_random<T><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, (T *)base_of(out), (int)op, out->dtype == TN_F32, seed, offset, a, b, low, range, exact, st))
    CU_LAUNCHED(fn);
    return 0;
}

struct WinGeo { int64_t N, C, H, W, kh, kw, dh, dw, ph, pw, sh, sw, oh, ow, is[4], cs[3]; };
/* cols[n, (c, ki, kj), (y, x)] = img[n, c, y*sh - ph + ki*dh, x*sw - pw + kj*dw] or 0 */
template <class T> __global__ void k_im2col(int64_t total, WinGeo g, T *cols, const T *img) {
    GRID_LOOP(i, total) {
        int64_t x = i % g.ow, y = (i / g.ow) % g.oh, kj = (i / (g.ow * g.oh)) % g.kw, ki = (i / (g.ow * g.oh * g.kw)) % g.kh;
        int64_t c = (i / (g.ow * g.oh * g.kw * g.kh)) % g.C, n = i / (g.ow * g.oh * g.kw * g.kh * g.C);
        int64_t ih = y * g.sh - g.ph + ki * g.dh, iw = x * g.sw - g.pw + kj * g.dw;
        T v = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W ? img[n * g.is[0] + c * g.is[1] + ih * g.is[2] + iw * g.is[3]] : (T)0;
        cols[n * g.cs[0] + ((c * g.kh + ki) * g.kw + kj) * g.cs[1] + (y * g.ow + x) * g.cs[2]] = v;
    }
}
/* img[n, c, h, w] += every column entry that read it: a gather, so no atomics */
template <class T> __global__ void k_col2im(int64_t total, WinGeo g, const T *cols, T *img) {
    GRID_LOOP(i, total) {
        int64_t w = i % g.W, h = (i / g.W) % g.H, c = (i / (g.W * g.H)) % g.C, n = i / (g.W * g.H * g.C);
        T acc = 0;
        for (int64_t ki = 0; ki < g.kh; ki++) {
            int64_t ty = h + g.ph - ki * g.dh;
            if (ty < 0 || ty % g.sh || ty / g.sh >= g.oh) continue;
            for (int64_t kj = 0; kj < g.kw; kj++) {
                int64_t tx = w + g.pw - kj * g.dw;
                if (tx < 0 || tx % g.sw || tx / g.sw >= g.ow) continue;
                acc += cols[n * g.cs[0] + ((c * g.kh + ki) * g.kw + kj) * g.cs[1] + ((ty / g.sh) * g.ow + tx / g.sw) * g.cs[2]];
            }
        }
        img[n * g.is[0] + c * g.is[1] + h * g.is[2] + w * g.is[3]] += acc;
    }
}
static int cu_im2col(int fold, tn_tensor *cols, tn_tensor *img, const int64_t *geom) {
    const char *fn = "im2col";
    WinGeo g;
    g.N = img->shape[0]; g.C = img->shape[1]; g.H = img->shape[2]; g.W = img->shape[3];
    g.kh = geom[0]; g.kw = geom[1]; g.dh = geom[2]; g.dw = geom[3]; g.ph = geom[4]; g.pw = geom[5];
    g.sh = geom[6]; g.sw = geom[7]; g.oh = geom[8]; g.ow = geom[9];
    for (int d = 0; d < 4; d++) g.is[d] = img->strides[d];
    for (int d = 0; d < 3; d++) g.cs[d] = cols->strides[d];
    int64_t total = fold ? g.N * g.C * g.H * g.W : g.N * g.C * g.kh * g.kw * g.oh * g.ow;
    if (total == 0) return 0;
    if (img->dtype == TN_F32) {
        if (fold) k_col2im<float><<<blocks_for(total), kThreads, 0, cu_stream()>>>(total, g, (const float *)base_of(cols), (float *)base_of(img));
        else k_im2col<float><<<blocks_for(total), kThreads, 0, cu_stream()>>>(total, g, (float *)base_of(cols), (const float *)base_of(img));
    } else if (img->dtype == TN_F64) {
        if (fold) k_col2im<double><<<blocks_for(total), kThreads, 0, cu_stream()>>>(total, g, (const double *)base_of(cols), (double *)base_of(img));
        else k_im2col<double><<<blocks_for(total), kThreads, 0, cu_stream()>>>(total, g, (double *)base_of(cols), (const double *)base_of(img));
    } else return tn_error("im2col: dtype %s not supported (floating only)", tn_dtype_name(img->dtype));
    CU_LAUNCHED(fn);
    return 0;
}

/* The window tables travel in the kernel's parameters, never uploaded (an upload would wait
   on the device in every step): per axis as the formula that made them when one does (the
   strided windows of max_pool2d: start + i * step, end clipped; adaptive pooling's floor and
   ceil), else listed when they fit; only a longer table of another shape is copied up. */
struct PoolAxis {
    int kind;                   /* 0 strided, 1 adaptive, 2 listed (tab) */
    int64_t a, b, c, lim;       /* strided: start a, step b, extent c, end = min(start + c, lim); adaptive: in a, out b */
};
enum { kPoolTab = 224 };
struct PoolWin {
    int64_t xs[4];
    PoolAxis h, w;
    const int64_t *dev;         /* the listed tables in device memory when they did not fit tab */
    int64_t tab[kPoolTab];      /* hs, he, ws, we when listed */
};
static bool pool_axis_formula(const int64_t *s, const int64_t *e, int64_t n, PoolAxis *ax) {
    ax->kind = 0;   /* strided: s[i] = s[0] + i * step, e[i] = min(s[i] + ext, lim) with lim the largest end */
    int64_t step = n > 1 ? s[1] - s[0] : 1, lim = e[0], ext = e[0] - s[0];
    for (int64_t i = 0; i < n; i++) lim = e[i] > lim ? e[i] : lim, ext = e[i] - s[i] > ext ? e[i] - s[i] : ext;
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) ok = s[i] == s[0] + i * step && e[i] == (s[i] + ext < lim ? s[i] + ext : lim);
    if (ok) { ax->a = s[0]; ax->b = step; ax->c = ext; ax->lim = lim; return true; }
    ax->kind = 1;   /* adaptive over lim inputs */
    ok = true;
    for (int64_t i = 0; i < n && ok; i++) ok = s[i] == i * lim / n && e[i] == ((i + 1) * lim + n - 1) / n;
    if (ok) { ax->a = lim; ax->b = n; return true; }
    ax->kind = 2;
    return false;
}
__device__ __forceinline__ void pool_window(const PoolAxis &ax, const int64_t *list, int64_t n, int64_t i, int64_t *s, int64_t *e) {
    if (ax.kind == 0) { *s = ax.a + i * ax.b; *e = *s + ax.c < ax.lim ? *s + ax.c : ax.lim; }
    else if (ax.kind == 1) { *s = i * ax.a / ax.b; *e = ((i + 1) * ax.a + ax.b - 1) / ax.b; }
    else { *s = list[i]; *e = list[n + i]; }
}
/* the index (h*W + w) of each window's largest element, the last NaN winning (as the CPU) */
template <class T> __global__ void k_pool_argmax(int64_t total, int64_t C, int64_t W, int64_t OH, int64_t OW, const T *x, PoolWin pw,
                                                 int64_t dh, int64_t dw, int64_t *idx) {
    const int64_t *list = pw.dev ? pw.dev : pw.tab, *xs = pw.xs;
    GRID_LOOP(i, total) {
        int64_t z = i % OW, y = (i / OW) % OH, c = (i / (OW * OH)) % C, n = i / (OW * OH * C);
        int64_t hs, he, ws, we;
        pool_window(pw.h, list, OH, y, &hs, &he);
        pool_window(pw.w, list + 2 * OH, OW, z, &ws, &we);
        const T *plane = x + n * xs[0] + c * xs[1];
        int64_t h0 = hs >= 0 ? hs : hs + (-hs + dh - 1) / dh * dh;
        int64_t w0 = ws >= 0 ? ws : ws + (-ws + dw - 1) / dw * dw;
        int64_t best = h0 * W + w0;
        T m = plane[h0 * xs[2] + w0 * xs[3]];
        for (int64_t h = h0; h < he; h += dh)
            for (int64_t w = w0; w < we; w += dw) {
                T v = plane[h * xs[2] + w * xs[3]];
                if (v > m || v != v) { m = v; best = h * W + w; }
            }
        idx[i] = best;
    }
}
struct PoolChunk { int64_t v[kPoolTab]; };
__global__ void k_pool_put(int64_t *d, int64_t m, PoolChunk ch) {
    for (int64_t i = threadIdx.x; i < m; i += blockDim.x) d[i] = ch.v[i];
}
static int cu_pool_argmax(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw) {
    const char *fn = "max pooling";
    int64_t N = x->shape[0], C = x->shape[1], W = x->shape[3], OH = idx->shape[2], OW = idx->shape[3], total = N * C * OH * OW;
    if (total == 0) return 0;
    if (x->dtype != TN_F32 && x->dtype != TN_F64) return tn_error("max pooling: dtype %s not supported (floating only)", tn_dtype_name(x->dtype));
    PoolWin pw;
    memset(&pw, 0, sizeof pw);
    for (int d = 0; d < 4; d++) pw.xs[d] = x->strides[d];
    const bool formulas = pool_axis_formula(hs, he, OH, &pw.h) & pool_axis_formula(ws, we, OW, &pw.w);
    Scratch sc;
    if (!formulas) { /* both axes listed: hs, he, ws, we */
        pw.h.kind = pw.w.kind = 2;
        std::vector<int64_t> h(2 * OH + 2 * OW);
        memcpy(h.data(), hs, (size_t)OH * 8);
        memcpy(h.data() + OH, he, (size_t)OH * 8);
        memcpy(h.data() + 2 * OH, ws, (size_t)OW * 8);
        memcpy(h.data() + 2 * OH + OW, we, (size_t)OW * 8);
        if ((int64_t)h.size() <= kPoolTab) memcpy(pw.tab, h.data(), h.size() * 8);
        else { /* too long for the parameters (no library pooling gets here): written on the device by
                  kernels whose parameters carry it, no upload, so a capture holds it too */
            int64_t *d = (int64_t *)sc.get(h.size() * 8);
            if (!d) return -1;
            for (size_t at = 0; at < h.size(); at += kPoolTab) {
                PoolChunk ch;
                const size_t m = h.size() - at < (size_t)kPoolTab ? h.size() - at : (size_t)kPoolTab;
                memcpy(ch.v, h.data() + at, m * 8);
                k_pool_put<<<1, kThreads, 0, cu_stream()>>>(d + at, (int64_t)m, ch);
                CU_LAUNCHED(fn);
            }
            pw.dev = d;
        }
    }
    if (x->dtype == TN_F32) k_pool_argmax<float><<<blocks_for(total), kThreads, 0, cu_stream()>>>(total, C, W, OH, OW, (const float *)base_of(x), pw, dh, dw, (int64_t *)base_of(idx));
    else k_pool_argmax<double><<<blocks_for(total), kThreads, 0, cu_stream()>>>(total, C, W, OH, OW, (const double *)base_of(x), pw, dh, dw, (int64_t *)base_of(idx));
    CU_LAUNCHED(fn);
    return 0;
}

/* the fused optimizer step: tensor.h's update rule per element */
template <class T> struct OptimArgs { int kind, flags; T c[12]; };
__device__ __forceinline__ float optim_apply(int kind, int f, const float *c, float p, float g, float *a, float *b, float *e) { return tn_optim_apply_f32(kind, f, c, p, g, a, b, e); }
__device__ __forceinline__ double optim_apply(int kind, int f, const double *c, double p, double g, double *a, double *b, double *e) { return tn_optim_apply_f64(kind, f, c, p, g, a, b, e); }
template <class T> __global__ void k_optim(int64_t n, OptimArgs<T> k, T *p, const T *g, T *s0, T *s1, T *s2) {
    GRID_LOOP(i, n) {
        T d0 = 0, d1 = 0, d2 = 0;
        p[i] = optim_apply(k.kind, k.flags, k.c, p[i], g[i], s0 ? s0 + i : &d0, s1 ? s1 + i : &d1, s2 ? s2 + i : &d2);
    }
}
template <class T> static void launch_optim(const tn__optk *k, int64_t n, tn_tensor *p, tn_tensor *g, tn_tensor *const *s) {
    OptimArgs<T> a;
    a.kind = k->kind;
    a.flags = k->flags;
    for (int j = 0; j < 12; j++) a.c[j] = (T)k->c[j];
    T *st[3];
    for (int j = 0; j < 3; j++) st[j] = s[j] ? (T *)base_of(s[j]) : NULL;
    k_optim<T><<<blocks_for(n), kThreads, 0, cu_stream()>>>(n, a, (T *)base_of(p), (const T *)base_of(g), st[0], st[1], st[2]);
}
static int cu_optim(const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *s) {
    int64_t n = tn_numel(p);
    if (n == 0) return 0;
    if (p->dtype == TN_F32) launch_optim<float>(k, n, p, g, s);
    else launch_optim<double>(k, n, p, g, s);
    CU_LAUNCHED("optimizer step");
    return 0;
}
/* The multi-tensor step (PyTorch's multi_tensor_apply): up to OPTIM_CHUNK parameters per
   launch, their pointers, sizes and coefficients in the kernel's parameters (under 4 KiB),
   one grid over their concatenated elements; each element's update is optim's. */
enum { OPTIM_CHUNK = 20 };
template <class T> struct OptimChunk {
    int n;
    int64_t start[OPTIM_CHUNK + 1];   /* parameter j's elements are [start[j], start[j + 1]) */
    T *p[OPTIM_CHUNK], *s0[OPTIM_CHUNK], *s1[OPTIM_CHUNK], *s2[OPTIM_CHUNK];
    const T *g[OPTIM_CHUNK];
    OptimArgs<T> a[OPTIM_CHUNK];
};
template <class T> __global__ void k_optim_multi(OptimChunk<T> c) {
    GRID_LOOP(i, c.start[c.n]) {
        int j = 0;
        while (i >= c.start[j + 1]) j++;
        const int64_t e = i - c.start[j];
        T d0 = 0, d1 = 0, d2 = 0;
        const OptimArgs<T> &k = c.a[j];
        c.p[j][e] = optim_apply(k.kind, k.flags, k.c, c.p[j][e], c.g[j][e], c.s0[j] ? c.s0[j] + e : &d0, c.s1[j] ? c.s1[j] + e : &d1,
                                c.s2[j] ? c.s2[j] + e : &d2);
    }
}
static std::atomic<int64_t> n_optim_multi;   /* tn_cuda_stats */
template <class T> static int launch_optim_multi(const tn__optk *k, int n, tn_tensor *const *p, tn_tensor *const *g, tn_tensor *const *s) {
    for (int i0 = 0; i0 < n;) {
        OptimChunk<T> c;
        memset(&c, 0, sizeof c);
        for (; i0 < n && c.n < OPTIM_CHUNK; i0++) {
            const int64_t m = tn_numel(p[i0]);
            if (m == 0) continue;
            const int j = c.n++;
            c.start[j + 1] = c.start[j] + m;
            c.p[j] = (T *)base_of(p[i0]);
            c.g[j] = (const T *)base_of(g[i0]);
            T **st[3] = {c.s0, c.s1, c.s2};
            for (int q = 0; q < 3; q++) st[q][j] = s[3 * i0 + q] ? (T *)base_of(s[3 * i0 + q]) : NULL;
            c.a[j].kind = k[i0].kind;
            c.a[j].flags = k[i0].flags;
            for (int q = 0; q < 12; q++) c.a[j].c[q] = (T)k[i0].c[q];
        }
        if (c.n == 0) continue;
        k_optim_multi<T><<<blocks_for(c.start[c.n]), kThreads, 0, cu_stream()>>>(c);
        CU_LAUNCHED("optimizer step");
    }
    return 0;
}
static int cu_optim_multi(const tn__optk *k, int n, tn_tensor *const *p, tn_tensor *const *g, tn_tensor *const *s) {
    if (n <= 0) return 0;
    n_optim_multi++;
    return p[0]->dtype == TN_F32 ? launch_optim_multi<float>(k, n, p, g, s) : launch_optim_multi<double>(k, n, p, g, s);
}

/* ======================================================================= */
/* 9. cuDNN: convolution, batch norm, pooling                              */
/* ======================================================================= */
/* cuDNN's convolution API (forward, backward data, backward filter). The algorithm for a
   shape: cuDNN's heuristics (cudnnGet*Algorithm_v7) give candidates in order; each is tried
   with the math type its result names (TF32 off: FMA math, tensor-op results skipped), its
   workspace confirmed by cudnnGet*WorkspaceSize and taken from the caching allocator, until
   one runs. What ran is cached per (mode, dtype, shapes, geometry, TF32); a shape no
   candidate runs is cached as declined (the im2col path), and tn_cuda_stats counts every
   declined call and every candidate that failed, so a fallback is never silent. TF32
   follows tn_get_cudnn_tf32 (on by default, as torch.backends.cudnn.allow_tf32).
   TN_CUDNN=0 in the environment turns cuDNN off (the im2col path then runs); a build
   with TN_NO_CUDNN (the Makefile's choice where cudnn.h is missing) has none. */
/* which path the library entries took, reported by tn_cuda_memory_stats */
static std::atomic<int64_t> n_dnn_conv, n_conv_fallbacks, n_algo_retries, n_dnn_pool, n_pool_fallbacks, n_dnn_bn, n_bn_fallbacks;
#ifdef TN_NO_CUDNN
static int dnn_conv2d(int, tn_tensor *, tn_tensor *, tn_tensor *, const int64_t *) { return 1; }
static int dnn_batch_norm(int, tn_tensor *, tn_tensor *, tn_tensor *, tn_tensor *, tn_tensor *, tn_tensor *, tn_tensor *, tn_tensor *, double) { return 1; }
static int dnn_pool2d(tn_tensor *, tn_tensor *, tn_tensor *, tn_tensor *, const int64_t *) { return 1; }
#else
static int cudnn_fail(const char *what, cudnnStatus_t s) { return tn_error("%s: cuDNN error %s", what, cudnnGetErrorString(s)); }
#define DNN_CHECK(what, call) do { cudnnStatus_t s_ = (call); if (s_ != CUDNN_STATUS_SUCCESS) return cudnn_fail(what, s_); } while (0)

static cudnnHandle_t cudnn_handle(void) {
    static cudnnHandle_t h;
    static std::once_flag once;
    static cudnnStatus_t status = CUDNN_STATUS_NOT_INITIALIZED;
    std::call_once(once, [] {
        const char *env = getenv("TN_CUDNN");
        if (!env || strcmp(env, "0")) status = cudnnCreate(&h);
    });
    return status == CUDNN_STATUS_SUCCESS ? h : NULL;
}

/* a cuDNN handle serves one thread at a time */
static std::mutex &cudnn_mutex(void) {
    static std::mutex mu;
    return mu;
}
/* alpha = 1 and beta = 0 in the data type cuDNN wants for them (double for double data) */
struct Blend {
    float f1 = 1, f0 = 0;
    double d1 = 1, d0 = 0;
    bool f32;
    explicit Blend(bool is_f32) : f32(is_f32) {}
    const void *one() const { return f32 ? (const void *)&f1 : (const void *)&d1; }
    const void *zero() const { return f32 ? (const void *)&f0 : (const void *)&d0; }
};

struct ConvKey {
    int64_t v[20];
    bool operator<(const ConvKey &o) const { return memcmp(v, o.v, sizeof v) < 0; }
};
struct ConvAlgo { int algo; size_t workspace; cudnnMathType_t math; };   /* algo -1: declined */
struct ConvCand { int algo; cudnnMathType_t math; };

/* RAII for the four descriptors of one call */
struct ConvDescs {
    cudnnTensorDescriptor_t x = NULL, y = NULL;
    cudnnFilterDescriptor_t w = NULL;
    cudnnConvolutionDescriptor_t c = NULL;
    ~ConvDescs() {
        if (x) cudnnDestroyTensorDescriptor(x);
        if (y) cudnnDestroyTensorDescriptor(y);
        if (w) cudnnDestroyFilterDescriptor(w);
        if (c) cudnnDestroyConvolutionDescriptor(c);
    }
};

/* the heuristics' candidates for mode, best first: those cuDNN says can run, with their
   math type; without TF32 a float32 candidate runs with FMA math and tensor-op ones
   (which would round to TF32 or half) are left out */
template <class Perf> static void conv_candidates(const Perf *perf, int n, bool f32, bool tf32, std::vector<ConvCand> &out) {
    for (int i = 0; i < n; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
        cudnnMathType_t m = perf[i].mathType;
        if (f32 && !tf32) {
            if (m == CUDNN_TENSOR_OP_MATH || m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;
            m = CUDNN_FMA_MATH;
        }
        out.push_back(ConvCand{(int)perf[i].algo, m});
    }
}
static int conv_heuristics(cudnnHandle_t h, int mode, const ConvDescs &d, bool f32, bool tf32, std::vector<ConvCand> &out, const char *what) {
    int n = 0;
    if (mode == 0) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        DNN_CHECK(what, cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.c, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf));
        conv_candidates(perf, n, f32, tf32, out);
    } else if (mode == 1) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        DNN_CHECK(what, cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.c, d.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, perf));
        conv_candidates(perf, n, f32, tf32, out);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        DNN_CHECK(what, cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.c, d.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, perf));
        conv_candidates(perf, n, f32, tf32, out);
    }
    return 0;
}
/* the workspace algo needs with the descriptor's math type (cuDNN's own count, not the
   heuristics' estimate) */
static cudnnStatus_t conv_workspace(cudnnHandle_t h, int mode, const ConvDescs &d, int algo, size_t *ws) {
    if (mode == 0) return cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.c, d.y, (cudnnConvolutionFwdAlgo_t)algo, ws);
    if (mode == 1) return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.c, d.x, (cudnnConvolutionBwdDataAlgo_t)algo, ws);
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.c, d.w, (cudnnConvolutionBwdFilterAlgo_t)algo, ws);
}
static cudnnStatus_t conv_launch(cudnnHandle_t h, int mode, const ConvDescs &d, int algo, void *ws, size_t wsn, bool f32, tn_tensor *x, tn_tensor *w,
                                 tn_tensor *y) {
    Blend bl(f32);
    const void *alpha = bl.one(), *beta = bl.zero();
    if (mode == 0)
        return cudnnConvolutionForward(h, alpha, d.x, base_of(x), d.w, base_of(w), d.c, (cudnnConvolutionFwdAlgo_t)algo, ws, wsn, beta, d.y, base_of(y));
    if (mode == 1)
        return cudnnConvolutionBackwardData(h, alpha, d.w, base_of(w), d.y, base_of(y), d.c, (cudnnConvolutionBwdDataAlgo_t)algo, ws, wsn, beta, d.x, base_of(x));
    return cudnnConvolutionBackwardFilter(h, alpha, d.x, base_of(x), d.y, base_of(y), d.c, (cudnnConvolutionBwdFilterAlgo_t)algo, ws, wsn, beta, d.w, base_of(w));
}
/* cuDNN 9's statuses come in categories (NOT_SUPPORTED_SHAPE, NOT_SUPPORTED_SUBLIBRARY_
   UNAVAILABLE, ... are all 3xxx): a case cuDNN does not take, whatever the sub-code */
static bool dnn_not_supported(cudnnStatus_t s) {
#if CUDNN_MAJOR >= 9
    return CUDNN_STATUS_CATEGORY((int)s) == CUDNN_STATUS_NOT_SUPPORTED;
#else
    return s == CUDNN_STATUS_NOT_SUPPORTED;
#endif
}
#if CUDNN_MAJOR >= 9
static const cudnnStatus_t kNoWorkspace = CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
#else
static const cudnnStatus_t kNoWorkspace = CUDNN_STATUS_ALLOC_FAILED;
#endif
/* a candidate's failure that the next candidate may not have: not supported, a parameter
   it does not take, no room for its workspace, its kernel failing to compile at run time;
   anything else is an error */
static bool conv_try_next(cudnnStatus_t s) {
#if CUDNN_MAJOR >= 9
    if (CUDNN_STATUS_CATEGORY((int)s) == CUDNN_STATUS_BAD_PARAM || s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
        s == CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED)
        return true;
#else
    if (s == CUDNN_STATUS_BAD_PARAM) return true;
#endif
    return s == kNoWorkspace || dnn_not_supported(s);
}

static int dnn_conv2d(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *y, const int64_t *g) {
    const char *what = mode == 0 ? "conv2d (cuDNN forward)" : mode == 1 ? "conv2d (cuDNN backward data)" : "conv2d (cuDNN backward filter)";
    bool f32 = x->dtype == TN_F32;
    if ((!f32 && x->dtype != TN_F64) || w->dtype != x->dtype || y->dtype != x->dtype) return 1;
    if (!tn_is_contiguous(x) || !tn_is_contiguous(w) || !tn_is_contiguous(y)) return 1;
    if (tn_numel(x) > INT32_MAX || tn_numel(w) > INT32_MAX || tn_numel(y) > INT32_MAX) return 1;
    for (int i = 0; i < 7; i++)
        if (g[i] > INT32_MAX || g[i] < 0) return 1;
    if (tn_numel(x) == 0 || tn_numel(y) == 0 || tn_numel(w) == 0) return 1;
    cudnnHandle_t h = cudnn_handle();
    if (!h) return 1;
    std::lock_guard<std::mutex> call_lock(cudnn_mutex());
    cudnnSetStream(h, cu_stream());   /* the legacy stream, or a capture's (section 9c) */
    cudnnDataType_t dt = f32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    ConvDescs d;
    DNN_CHECK(what, cudnnCreateTensorDescriptor(&d.x));
    DNN_CHECK(what, cudnnCreateTensorDescriptor(&d.y));
    DNN_CHECK(what, cudnnCreateFilterDescriptor(&d.w));
    DNN_CHECK(what, cudnnCreateConvolutionDescriptor(&d.c));
    DNN_CHECK(what, cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, dt, (int)x->shape[0], (int)x->shape[1], (int)x->shape[2], (int)x->shape[3]));
    DNN_CHECK(what, cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, dt, (int)y->shape[0], (int)y->shape[1], (int)y->shape[2], (int)y->shape[3]));
    DNN_CHECK(what, cudnnSetFilter4dDescriptor(d.w, dt, CUDNN_TENSOR_NCHW, (int)w->shape[0], (int)w->shape[1], (int)w->shape[2], (int)w->shape[3]));
    DNN_CHECK(what, cudnnSetConvolution2dDescriptor(d.c, (int)g[2], (int)g[3], (int)g[0], (int)g[1], (int)g[4], (int)g[5], CUDNN_CROSS_CORRELATION, dt));
    DNN_CHECK(what, cudnnSetConvolutionGroupCount(d.c, (int)g[6]));
    const bool tf32 = f32 && tn_get_cudnn_tf32();
    /* the heuristics see the math the call may use */
    DNN_CHECK(what, cudnnSetConvolutionMathType(d.c, tf32 || !f32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));

    static std::mutex mu;
    static std::map<ConvKey, ConvAlgo> cache;
    ConvKey key;
    memset(&key, 0, sizeof key);
    key.v[0] = mode; key.v[1] = f32; key.v[2] = tf32;
    for (int i = 0; i < 4; i++) { key.v[3 + i] = x->shape[i]; key.v[7 + i] = w->shape[i]; }
    for (int i = 0; i < 7; i++) key.v[11 + i] = g[i];
    {
        std::lock_guard<std::mutex> lock(mu);
        auto it = cache.find(key);
        if (it != cache.end()) {   /* what ran before (or that nothing did) */
            ConvAlgo a = it->second;
            if (a.algo < 0) return 1;
            DNN_CHECK(what, cudnnSetConvolutionMathType(d.c, a.math));
            Scratch sc;
            void *ws = a.workspace ? sc.get(a.workspace) : NULL;
            if (a.workspace && !ws) { tn_clear_error(); return 1; }   /* no room for its workspace now: the im2col path, which needs less */
            cudnnStatus_t st = conv_launch(h, mode, d, a.algo, ws, a.workspace, f32, x, w, y);
            if (st == CUDNN_STATUS_SUCCESS) return 0;
            if (!conv_try_next(st)) return cudnn_fail(what, st);
            cache.erase(key);   /* it ran before and not now: search again */
        }
    }
    if (cu_capturing)   /* no algorithm search inside a CUDA-graph capture (section 9c; its trial runs would be captured): warm up first; a replay's capture runs uncaptured */
        return tn_error("%s: cuDNN's algorithm search cannot run inside a CUDA-graph capture", what);
    std::vector<ConvCand> cands;
    if (conv_heuristics(h, mode, d, f32, tf32, cands, what)) return -1;
    ConvAlgo done = {-1, 0, CUDNN_DEFAULT_MATH};
    for (const ConvCand &c : cands) {
        size_t wsn = 0;
        cudnnStatus_t st = cudnnSetConvolutionMathType(d.c, c.math);
        if (st == CUDNN_STATUS_SUCCESS) st = conv_workspace(h, mode, d, c.algo, &wsn);
        Scratch sc;
        void *ws = NULL;
        if (st == CUDNN_STATUS_SUCCESS && wsn && !(ws = sc.get(wsn))) { tn_clear_error(); st = kNoWorkspace; }
        if (st == CUDNN_STATUS_SUCCESS) st = conv_launch(h, mode, d, c.algo, ws, wsn, f32, x, w, y);
        if (st == CUDNN_STATUS_SUCCESS) { done = ConvAlgo{c.algo, wsn, c.math}; break; }
        if (!conv_try_next(st)) return cudnn_fail(what, st);
        n_algo_retries++;
    }
    std::lock_guard<std::mutex> lock(mu);
    cache[key] = done;   /* declined too: later calls of this shape go straight to im2col */
    return done.algo < 0 ? 1 : 0;
}

/* ---- batch norm (cuDNN, spatial mode: statistics per channel over N and H*W) ---- */
/* x [N, C, L] is described as [N, C, L, 1]. Training: cuDNN's running averages with factor
   1 into scratch give this batch's mean and unbiased variance, from which st gets the
   biased one exactly (var * (M-1)/M) rather than from 1/invstd^2; the header updates the
   real running statistics from st, as on the CPU. Backward of training mode: cuDNN's,
   from the saved mean and invstd; evaluation-mode backward is declined (the header's two
   elementwise ops). */
template <class P> __global__ void k_fill_plain(int64_t n, P *o, P v) { GRID_LOOP(i, n) o[i] = v; }
template <class P> __global__ void k_bn_st_out(int64_t C, const P *mean, const P *invstd, const P *uvar, double unbias, double *st) {
    GRID_LOOP(c, C) { st[c] = (double)mean[c]; st[C + c] = (double)invstd[c]; st[2 * C + c] = (double)uvar[c] * unbias; }
}
/* a <- st[0:C] (mean), b <- st[k*C : (k+1)*C] (k = 1: invstd, 2: variance), in P */
template <class P> __global__ void k_bn_st_in(int64_t C, const double *st, int k, P *a, P *b) {
    GRID_LOOP(c, C) { a[c] = (P)st[c]; b[c] = (P)st[k * C + c]; }
}
template <class P> static int bn_run(cudnnHandle_t h, int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx,
                                     tn_tensor *gw, tn_tensor *gb, double eps, cudnnTensorDescriptor_t xd, cudnnTensorDescriptor_t pd) {
    const char *what = mode == 2 ? "batch_norm (cuDNN backward)" : "batch_norm (cuDNN forward)";
    const int64_t C = x->shape[1], M = tn_numel(x) / C;
    Scratch sc;
    /* scale, bias, mean, invstd or var, unbiased var, then the running mean (training) or
       dscale, and dbias */
    P *buf = (P *)sc.get((size_t)(7 * C) * sizeof(P));
    void *dx = mode != 2 ? NULL : gx ? base_of(gx) : sc.get((size_t)tn_numel(x) * sizeof(P));   /* cuDNN always writes dx */
    if (!buf || (mode == 2 && !dx)) return -1;
    P *scale = w ? (P *)base_of(w) : buf, *bias = b ? (P *)base_of(b) : buf + C, *s0 = buf + 2 * C, *s1 = buf + 3 * C, *s2 = buf + 4 * C;
    if (!w) { k_fill_plain<<<blocks_for(C), kThreads, 0, cu_stream()>>>(C, buf, (P)1); CU_LAUNCHED(what); }
    if (!b) { k_fill_plain<<<blocks_for(C), kThreads, 0, cu_stream()>>>(C, buf + C, (P)0); CU_LAUNCHED(what); }
    Blend bl(sizeof(P) == 4);
    double *stp = (double *)base_of(st);
    if (mode == 0) {   /* running averages from zero with factor 1: exactly this batch's mean and unbiased variance */
        k_fill_plain<<<blocks_for(2 * C), kThreads, 0, cu_stream()>>>(2 * C, s2, (P)0);
        CU_LAUNCHED(what);
        DNN_CHECK(what, cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, bl.one(), bl.zero(), xd, base_of(x), xd, base_of(y), pd,
                                                               scale, bias, 1.0, buf + 5 * C, s2, eps, s0, s1));
        k_bn_st_out<P><<<blocks_for(C), kThreads, 0, cu_stream()>>>(C, s0, s1, s2, (double)(M - 1) / (double)M, stp);
        CU_LAUNCHED(what);
    } else if (mode == 1) {
        k_bn_st_in<P><<<blocks_for(C), kThreads, 0, cu_stream()>>>(C, stp, 2, s0, s1);
        CU_LAUNCHED(what);
        DNN_CHECK(what, cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, bl.one(), bl.zero(), xd, base_of(x), xd, base_of(y), pd,
                                                                scale, bias, s0, s1, eps));
    } else {
        k_bn_st_in<P><<<blocks_for(C), kThreads, 0, cu_stream()>>>(C, stp, 1, s0, s1);
        CU_LAUNCHED(what);
        P *ds = gw ? (P *)base_of(gw) : buf + 5 * C, *db = gb ? (P *)base_of(gb) : buf + 6 * C;
        DNN_CHECK(what, cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, bl.one(), bl.zero(), bl.one(), bl.zero(), xd, base_of(x), xd, base_of(y),
                                                        xd, dx, pd, scale, ds, db, eps, s0, s1));
    }
    return 0;
}
static int dnn_batch_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw, tn_tensor *gb,
                          double eps) {
    const bool f32 = x->dtype == TN_F32;
    if (mode == 3 || (!f32 && x->dtype != TN_F64) || eps < CUDNN_BN_MIN_EPSILON || st->dtype != TN_F64) return 1;
    tn_tensor *const ts[7] = {x, w, b, y, gx, gw, gb};
    if (!dense(ts, 7, x)) return 1;
    if (tn_numel(x) == 0 || tn_numel(x) > INT32_MAX || !tn_is_contiguous(st)) return 1;
    const int64_t N = x->shape[0], C = x->shape[1], L = tn_numel(x) / (N * C);
    cudnnHandle_t h = cudnn_handle();
    if (!h) return 1;
    std::lock_guard<std::mutex> call_lock(cudnn_mutex());
    cudnnSetStream(h, cu_stream());   /* the legacy stream, or a capture's (section 9c) */
    const char *what = "batch_norm (cuDNN)";
    struct Descs {
        cudnnTensorDescriptor_t x = NULL, p = NULL;
        ~Descs() { if (x) cudnnDestroyTensorDescriptor(x); if (p) cudnnDestroyTensorDescriptor(p); }
    } d;
    DNN_CHECK(what, cudnnCreateTensorDescriptor(&d.x));
    DNN_CHECK(what, cudnnCreateTensorDescriptor(&d.p));
    DNN_CHECK(what, cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, f32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE, (int)N, (int)C, (int)L, 1));
    DNN_CHECK(what, cudnnDeriveBNTensorDescriptor(d.p, d.x, CUDNN_BATCHNORM_SPATIAL));
    return f32 ? bn_run<float>(h, mode, x, w, b, st, y, gx, gw, gb, eps, d.x, d.p) : bn_run<double>(h, mode, x, w, b, st, y, gx, gw, gb, eps, d.x, d.p);
}

/* ---- pooling (cuDNN): average pooling both ways, max pooling's forward ---- */
/* cuDNN's max starts from the lowest finite value, so a window of -inf gives -FLT_MAX where
   PyTorch gives -inf: those outputs (and only those) get their window's true maximum. */
template <class T> __global__ void k_pool_max_lowest(int64_t total, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t kh, int64_t kw,
                                                     int64_t sh, int64_t sw, const T *x, T *y) {
    const T lowest = sizeof(T) == 4 ? (T)-3.402823466e+38 : (T)-1.7976931348623157e+308;
    GRID_LOOP(i, total) {
        if (y[i] != lowest) continue;
        const int64_t ox = i % OW, oy = (i / OW) % OH, nc = i / (OW * OH);
        const T *p = x + nc * H * W + oy * sh * W + ox * sw;
        T m = p[0];
        for (int64_t h = 0; h < kh; h++)
            for (int64_t w = 0; w < kw; w++) {
                T v = p[h * W + w];
                if (v > m || v != v) m = v;
            }
        y[i] = m;
    }
}
/* Max pooling's cases cuDNN does not settle as PyTorch does are declined: its gradient
   (which of tied maxima gets it, and a NaN's) goes through the argmax kernel, the first
   index as PyTorch's; padded windows, whose padding cuDNN reads as -FLT_MAX (the fix above
   cannot tell padding from data), run the composite too. */
static int dnn_pool2d(tn_tensor *x, tn_tensor *y, tn_tensor *gy, tn_tensor *gx, const int64_t *g) {
    const char *what = gx ? "pool2d (cuDNN backward)" : "pool2d (cuDNN forward)";
    if (g[6] == 0 && (gx || g[4] || g[5])) return 1;
    const bool f32 = x->dtype == TN_F32;
    if ((!f32 && x->dtype != TN_F64) || y->dtype != x->dtype || (gx && (gx->dtype != x->dtype || gy->dtype != x->dtype))) return 1;
    tn_tensor *const ts[4] = {x, y, gy, gx};
    if (!dense(ts, 4, NULL) || tn_numel(x) > INT32_MAX || tn_numel(y) > INT32_MAX) return 1;
    for (int i = 0; i < 6; i++)
        if (g[i] > INT32_MAX) return 1;
    if (tn_numel(x) == 0 || tn_numel(y) == 0) return 1;
    cudnnHandle_t h = cudnn_handle();
    if (!h) return 1;
    std::lock_guard<std::mutex> call_lock(cudnn_mutex());
    cudnnSetStream(h, cu_stream());   /* the legacy stream, or a capture's (section 9c) */
    struct Descs {
        cudnnTensorDescriptor_t x = NULL, y = NULL;
        cudnnPoolingDescriptor_t p = NULL;
        ~Descs() {
            if (x) cudnnDestroyTensorDescriptor(x);
            if (y) cudnnDestroyTensorDescriptor(y);
            if (p) cudnnDestroyPoolingDescriptor(p);
        }
    } d;
    const cudnnDataType_t dt = f32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    const cudnnPoolingMode_t pm = g[6] == 0 ? CUDNN_POOLING_MAX_DETERMINISTIC : g[6] == 1 ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                                          : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    DNN_CHECK(what, cudnnCreateTensorDescriptor(&d.x));
    DNN_CHECK(what, cudnnCreateTensorDescriptor(&d.y));
    DNN_CHECK(what, cudnnCreatePoolingDescriptor(&d.p));
    DNN_CHECK(what, cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, dt, (int)x->shape[0], (int)x->shape[1], (int)x->shape[2], (int)x->shape[3]));
    DNN_CHECK(what, cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, dt, (int)y->shape[0], (int)y->shape[1], (int)y->shape[2], (int)y->shape[3]));
    DNN_CHECK(what, cudnnSetPooling2dDescriptor(d.p, pm, CUDNN_PROPAGATE_NAN, (int)g[0], (int)g[1], (int)g[4], (int)g[5], (int)g[2], (int)g[3]));
    int on, oc, oh, ow;
    DNN_CHECK(what, cudnnGetPooling2dForwardOutputDim(d.p, d.x, &on, &oc, &oh, &ow));
    if (oh != y->shape[2] || ow != y->shape[3]) return 1;   /* windows counted otherwise: the composite */
    Blend bl(f32);
    cudnnStatus_t s = gx ? cudnnPoolingBackward(h, d.p, bl.one(), d.y, base_of(y), d.y, base_of(gy), d.x, base_of(x), bl.zero(), d.x, base_of(gx))
                         : cudnnPoolingForward(h, d.p, bl.one(), d.x, base_of(x), bl.zero(), d.y, base_of(y));
    if (dnn_not_supported(s)) return 1;
    if (s != CUDNN_STATUS_SUCCESS) return cudnn_fail(what, s);
    if (g[6] == 0) {   /* max forward: windows of -inf */
        const int64_t total = tn_numel(y), H = x->shape[2], W = x->shape[3], OH = y->shape[2], OW = y->shape[3];
        if (f32) k_pool_max_lowest<float><<<blocks_for(total), kThreads, 0, cu_stream()>>>(total, H, W, OH, OW, g[0], g[1], g[2], g[3], (const float *)base_of(x), (float *)base_of(y));
        else k_pool_max_lowest<double><<<blocks_for(total), kThreads, 0, cu_stream()>>>(total, H, W, OH, OW, g[0], g[1], g[2], g[3], (const double *)base_of(x), (double *)base_of(y));
        CU_LAUNCHED(what);
    }
    return 0;
}
#endif /* TN_NO_CUDNN */
/* the library entries, counting which path each call took (0: cuDNN ran; 1: declined, the
   header's fallback runs) */
static int count_path(int r, std::atomic<int64_t> &ran, std::atomic<int64_t> &declined) {
    if (r == 0) ran++;
    else if (r == 1) declined++;
    return r;
}
static int cu_conv2d(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *y, const int64_t *g) {
    return count_path(dnn_conv2d(mode, x, w, y, g), n_dnn_conv, n_conv_fallbacks);
}
static int cu_batch_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw, tn_tensor *gb,
                         double eps) {
    return count_path(dnn_batch_norm(mode, x, w, b, st, y, gx, gw, gb, eps), n_dnn_bn, n_bn_fallbacks);
}
static int cu_pool2d(tn_tensor *x, tn_tensor *y, tn_tensor *gy, tn_tensor *gx, const int64_t *g) {
    return count_path(dnn_pool2d(x, y, gy, gx, g), n_dnn_pool, n_pool_fallbacks);
}

/* ======================================================================= */
/* 9b. FFT (cuFFT): tn_backend.fft                                           */
/* ======================================================================= */
/* Batched transforms over the last 1 to 3 dims of contiguous tensors (the header moves the
   transformed dims there): one cufftPlanMany per (kind, precision, sizes, batch, device),
   cached up to kFftPlans plans (the cache is emptied when full), its work area from the
   unit's allocator for the call, on cu_stream() as every kernel here. cuFFT
   is unnormalised: the scale is a kernel after it. c2r overwrites its input, so it reads a
   copy. Inside a CUDA-graph capture a transform runs on a cached plan only: making one
   allocates and uploads (a capture cannot hold that; cuFFT documents graph support for
   execution, not planning), so warm up first, as for cuDNN's algorithms. A captured graph
   holds the plan's device data: the cache is not emptied while any graph lives. */
static int cufft_fail(const char *what, cufftResult r) { return tn_error("%s: cuFFT error %d", what, (int)r); }
#define FFT_CHECK(what, call) do { cufftResult r_ = (call); if (r_ != CUFFT_SUCCESS) return cufft_fail(what, r_); } while (0)
struct FftKey {
    int kind, dbl, rank, dev;
    long long n[3], batch;
    bool operator<(const FftKey &o) const {
        if (kind != o.kind || dbl != o.dbl || rank != o.rank || dev != o.dev) return kind != o.kind ? kind < o.kind : dbl != o.dbl ? dbl < o.dbl : rank != o.rank ? rank < o.rank : dev < o.dev;
        for (int k = 0; k < 3; k++)
            if (n[k] != o.n[k]) return n[k] < o.n[k];
        return batch < o.batch;
    }
};
struct FftPlans {
    std::mutex mu;   /* held through a plan's use: its work area is set per call */
    std::map<FftKey, std::pair<cufftHandle, size_t>> plans;   /* the plan and its work area's size */
};
static FftPlans &fft_plans() {
    static FftPlans *p = new FftPlans();   /* never destroyed: as the allocator */
    return *p;
}
enum { kFftPlans = 64 };
static std::atomic<int64_t> cu_live_graphs;   /* CUDA graphs instantiated and not freed (section 9c) */
template <class R> __global__ void k_fft_scale(int64_t n, R *p, R s) { GRID_LOOP(i, n) p[i] *= s; }
static int cu_fft(int kind, tn_tensor *y, tn_tensor *x, int rank, const int64_t *n, double scale) {
    const char *fn = "fft";
    const bool dbl = x->dtype == TN_F64 || x->dtype == TN_C128;
    if (kind < 0 || kind > 3 || rank < 1 || rank > 3 || x->ndim < rank || y->ndim != x->ndim || x->device != TN_CUDA || y->device != TN_CUDA ||
        !tn_is_contiguous(x) || !tn_is_contiguous(y))
        return tn_error("%s: expected contiguous GPU tensors and 1 to 3 transformed dims (kind %d, rank %d)", fn, kind, rank);
    const int64_t total = tn_numel(y);
    if (total == 0) return 0;
    long long nn[3] = {1, 1, 1}, pts = 1;
    for (int k = 0; k < rank; k++) { nn[k] = n[k]; pts *= n[k]; }
    const int64_t batch = tn_numel(kind == 3 ? y : x) / pts;   /* the real side holds the signal's points */
    int dev = 0;
    CU_CHECK(fn, cudaGetDevice(&dev));
    FftKey key;
    key.kind = kind; key.dbl = dbl; key.rank = rank; key.dev = dev; key.batch = batch;
    for (int k = 0; k < 3; k++) key.n[k] = nn[k];
    const cufftType type = kind <= 1 ? (dbl ? CUFFT_Z2Z : CUFFT_C2C) : kind == 2 ? (dbl ? CUFFT_D2Z : CUFFT_R2C) : (dbl ? CUFFT_Z2D : CUFFT_C2R);
    Scratch sc;
    FftPlans &fp = fft_plans();
    std::lock_guard<std::mutex> lock(fp.mu);
    auto it = fp.plans.find(key);
    if (it == fp.plans.end()) {
        if (cu_capturing) return cu_uncapturable("a cuFFT plan made (run the transform once before the capture)");
        if (fp.plans.size() >= kFftPlans && cu_live_graphs == 0) {   /* the bound: start over, once the queued transforms are done */
            CU_CHECK("fft: waiting for the queued transforms", cudaStreamSynchronize(cu_stream()));
            for (auto &e : fp.plans) cufftDestroy(e.second.first);
            fp.plans.clear();
        }
        cufftHandle h;
        FFT_CHECK("fft: plan", cufftCreate(&h));
        size_t work = 0;
        cufftResult r = cufftSetAutoAllocation(h, 0);
        if (r == CUFFT_SUCCESS) r = cufftMakePlanMany64(h, rank, nn, NULL, 1, 0, NULL, 1, 0, type, batch, &work);
        if (r != CUFFT_SUCCESS) {
            cufftDestroy(h);
            return cufft_fail("fft: plan", r);
        }
        it = fp.plans.emplace(key, std::make_pair(h, work)).first;
    }
    const cufftHandle h = it->second.first;
    if (it->second.second) {   /* a plan needing none gets none (an allocation would fail a replay's capture) */
        void *work = sc.get(it->second.second);
        if (!work) return -1;
        FFT_CHECK(fn, cufftSetWorkArea(h, work));
    }
    FFT_CHECK(fn, cufftSetStream(h, cu_stream()));
    void *in = base_of(x), *out = base_of(y);
    if (kind == 3) {   /* c2r overwrites its input: a copy */
        const size_t nb = (size_t)tn_numel(x) * tn_dtype_size(x->dtype);
        if (!(in = sc.get(nb))) return -1;
        CU_CHECK(fn, cudaMemcpyAsync(in, base_of(x), nb, cudaMemcpyDeviceToDevice, cu_stream()));
    }
    const int dir = kind == 0 ? CUFFT_FORWARD : CUFFT_INVERSE;
    switch (type) {
    case CUFFT_C2C: FFT_CHECK(fn, cufftExecC2C(h, (cufftComplex *)in, (cufftComplex *)out, dir)); break;
    case CUFFT_Z2Z: FFT_CHECK(fn, cufftExecZ2Z(h, (cufftDoubleComplex *)in, (cufftDoubleComplex *)out, dir)); break;
    case CUFFT_R2C: FFT_CHECK(fn, cufftExecR2C(h, (cufftReal *)in, (cufftComplex *)out)); break;
    case CUFFT_D2Z: FFT_CHECK(fn, cufftExecD2Z(h, (cufftDoubleReal *)in, (cufftDoubleComplex *)out)); break;
    case CUFFT_C2R: FFT_CHECK(fn, cufftExecC2R(h, (cufftComplex *)in, (cufftReal *)out)); break;
    default: FFT_CHECK(fn, cufftExecZ2D(h, (cufftDoubleComplex *)in, (cufftDoubleReal *)out)); break;
    }
    if (scale != 1.0) {   /* the parts of complex elements alike */
        const int64_t m = total * (tn_dtype_is_complex(y->dtype) ? 2 : 1);
        if (dbl) k_fft_scale<double><<<blocks_for(m), kThreads, 0, cu_stream()>>>(m, (double *)out, scale);
        else k_fft_scale<float><<<blocks_for(m), kThreads, 0, cu_stream()>>>(m, (float *)out, (float)scale);
        CU_LAUNCHED(fn);
    }
    return 0;
}

/* ======================================================================= */
/* 9c. CUDA graphs: the capture of a graph replay (tn_backend.graph_*)      */
/* ======================================================================= */
/* tn_graph_run captures a steady replay (src/jit/trace.c, docs/deploy.md). graph_begin gives
   cuBLAS a fixed workspace (it would allocate one inside the capture otherwise), points this
   thread's kernels and library calls at a stream of its own (non-blocking, so no implicit
   synchronisation with the legacy stream joins the capture: cu_stream, section 1) and starts
   capturing it in thread-local mode (other threads' calls neither join nor break it).
   Inside, an allocation fails (cu_alloc), as does a synchronisation or a synchronous copy
   (CUDA refuses them), and so the replay: tn_graph_run ends the capture (graph_end fails)
   and runs it again uncaptured. graph_end ends capturing and instantiates the graph;
   graph_launch launches it on the legacy stream, after the work queued before (the inputs
   copied into the capture's buffers); graph_free destroys it. Not run on a GPU yet.
   Eager captures (tn_cuda_graph_begin: torch.cuda.graph) begin with graph_pool's BEGIN: the
   same, with the thread's allocations served from a capture-private Pool (section 2), so a
   cuDNN workspace (Scratch) is captured too. What cannot be captured: a convolution whose
   cuDNN algorithm is not cached from an earlier uncaptured run (no search inside a capture:
   cu_conv2d), a transform whose cuFFT plan is not cached (cu_fft), and the entries that
   refuse by CU_NO_CAPTURE (section 1: linalg, NCCL, nonzero, CUDA IPC); the header refuses
   copies between host and device. An eager capture holds index checks (their slots are the
   graph's: src/backend/cuda.c scans them after each replay), random draws (graph_pool's RNG
   hands cu_random the graph's device-resident seed and offset, which the header writes
   before each replay) and max pooling's argmax (its window table in kernel parameters, or
   written on the device by kernels that carry it); a replay's capture (tn_graph_run) still
   refuses the first two. */
struct CuGraph {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};
static int cu_graph_begin(void) {
    if (cu_capturing) return tn_error("CUDA graphs: this thread is capturing already");
    static thread_local cudaStream_t stream;   /* the thread's capture stream, kept for its later captures */
    if (!stream) CU_CHECK("CUDA graphs (cudaStreamCreateWithFlags)", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cublasHandle_t h = cublas_handle();
    if (!h) return tn_error("CUDA graphs: cuBLAS could not be initialised (cublasCreate failed)");
    {   /* cuBLAS's workspace from the first capture on (section 7: cu_matmul sets it after each cublasSetStream): one block, never freed */
        std::lock_guard<std::mutex> lock(cublas_mutex());
        if (!cublas_graph_ws) {
            void *ws = NULL;
            CU_CHECK("CUDA graphs (cuBLAS workspace)", cudaDeviceSynchronize());   /* no cuBLAS call in flight when its workspace changes */
            CU_CHECK("CUDA graphs (cuBLAS workspace)", cudaMalloc(&ws, kCublasGraphWs));
            cublasStatus_t bs = cublasSetWorkspace(h, ws, kCublasGraphWs);
            if (bs != CUBLAS_STATUS_SUCCESS) {
                cudaFree(ws);
                return cublas_fail("CUDA graphs (cublasSetWorkspace)", bs);
            }
            cublas_graph_ws = ws;
        }
    }
    CU_CHECK("CUDA graphs (cudaStreamBeginCapture)", cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cu_cur_stream = stream;
    cu_capturing = true;
    cu_capture_allocated = false;
    cu_capture_refused = NULL;
    cu_cap_rng = NULL;
    return 0;
}
static int cu_graph_end(void **graph) {
    *graph = NULL;
    if (!cu_capturing) return tn_error("CUDA graphs: graph_end without graph_begin");
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(cu_cur_stream, &g);
    cu_cur_stream = 0;
    cu_capturing = false;
    cu_cap_rng = NULL;
    if (cu_cap_pool) {   /* the capture's reference to its pool */
        allocator().release(cu_cap_pool);
        cu_cap_pool = NULL;
    }
    const char *refused = cu_capture_refused;
    cu_capture_refused = NULL;
    if (e == cudaSuccess && (!g || cu_capture_allocated || refused)) e = cudaErrorStreamCaptureInvalidated;
    cudaGraphExec_t x = NULL;
    if (e == cudaSuccess) e = cudaGraphInstantiateWithFlags(&x, g, 0);
    if (e != cudaSuccess) {
        if (g) cudaGraphDestroy(g);
        if (refused) {
            (void)cudaGetLastError();
            return tn_error("CUDA graphs: the CUDA graph capture failed: %s inside it", refused);
        }
        return cu_fail(cu_capture_allocated ? "CUDA graphs: the capture allocated memory" : "CUDA graphs: the capture failed", e);
    }
    CuGraph *cg = new CuGraph();
    cg->graph = g;
    cg->exec = x;
    *graph = cg;
    cu_live_graphs++;
    return 0;
}
static int cu_graph_launch(void *graph) {
    if (cu_capturing) return tn_error("CUDA graphs: a launch inside a capture");
    CU_CHECK("CUDA graphs (cudaGraphLaunch)", cudaGraphLaunch(((CuGraph *)graph)->exec, 0));
    return 0;
}
static void cu_graph_free(void *graph) {
    CuGraph *cg = (CuGraph *)graph;
    if (!cg) return;
    cudaGraphExecDestroy(cg->exec);   /* "If the executable graph is in-flight, it will ... be freed asynchronously on completion" (cudaGraphExecDestroy) */
    cudaGraphDestroy(cg->graph);
    delete cg;
    cu_live_graphs--;
}
static int cu_graph_pool(int op, void **pool) {
    Pool *P = (Pool *)*pool;
    switch (op) {
    case TN__GPOOL_NEW: *pool = new Pool(); return 0;
    case TN__GPOOL_RETAIN: allocator().retain(P); return 0;
    case TN__GPOOL_RELEASE: allocator().release(P); return 0;
    case TN__GPOOL_BEGIN:
        if (cu_graph_begin()) return -1;
        allocator().retain(P);
        cu_cap_pool = P;
        return 0;
    case TN__GPOOL_RNG:   /* the capture's draws read seed and offset from this int64 [4] (cu_random) */
        if (!cu_capturing || !cu_cap_pool) return tn_error("CUDA graphs: graph_pool: RNG outside an eager capture");
        cu_cap_rng = (const int64_t *)base_of((tn_tensor *)*pool);
        return 0;
    default: return tn_error("CUDA graphs: graph_pool: unknown op %d", op);
    }
}

/* ======================================================================= */
/* 9d. NCCL: tn_backend.nccl (torch.distributed's "nccl" backend)           */
/* ======================================================================= */
/* Built with TN_NCCL (the Makefile defines it where nccl.h is; NCCL=0 leaves it out).
   Collectives are queued on the legacy default stream as every kernel here, so they are
   ordered with the kernels that produce and consume their buffers and a block the caching
   allocator hands out again is safe; an event recorded after them is what the header
   polls (with its deadline: ncclCommAbort when it passes). Communicators are made on the
   current device; errors come back with ncclGetErrorString (and NCCL's last message). */
#ifdef TN_NCCL
#include <nccl.h>
static_assert(sizeof(ncclUniqueId) == sizeof(((tn_nccl_args *)0)->id), "ncclUniqueId is 128 bytes (NCCL_UNIQUE_ID_BYTES)");
static int nccl_fail(const char *what, ncclResult_t r, ncclComm_t comm) {
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 21300
    const char *last = ncclGetLastError(comm);
#else
    const char *last = NULL;
    (void)comm;
#endif
    return tn_error("%s: NCCL error %s%s%s", what, ncclGetErrorString(r), last && *last ? ": " : "", last && *last ? last : "");
}
#define NCCL_CHECK(what, comm, call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) return nccl_fail(what, r_, comm); } while (0)
/* NCCL's type of a dtype and how many of it an element is (complex: two reals) */
static bool nccl_type(tn_dtype d, ncclDataType_t *t, int64_t *per) {
    *per = 1;
    switch (d) {
    case TN_F32: *t = ncclFloat32; return true;
    case TN_F64: *t = ncclFloat64; return true;
    case TN_I32: *t = ncclInt32; return true;
    case TN_I64: *t = ncclInt64; return true;
    case TN_U8: case TN_BOOL: *t = ncclUint8; return true;   /* bools: MAX/MIN from the header (or, and) */
    case TN_I8: *t = ncclInt8; return true;
    case TN_F16: *t = ncclFloat16; return true;
    case TN_BF16: *t = ncclBfloat16; return true;
    case TN_C64: *t = ncclFloat32; *per = 2; return true;
    case TN_C128: *t = ncclFloat64; *per = 2; return true;
    default: return false;
    }
}
static ncclRedOp_t nccl_red(tn_dist_op op) {
    switch (op) {
#if NCCL_VERSION_CODE >= 21000   /* ncclAvg is NCCL 2.10's (cu_nccl refuses AVG before) */
    case TN_DIST_AVG: return ncclAvg;
#endif
    case TN_DIST_PRODUCT: return ncclProd;
    case TN_DIST_MIN: return ncclMin;
    case TN_DIST_MAX: return ncclMax;
    default: return ncclSum;
    }
}
static int cu_nccl(tn_nccl_op op, tn_nccl_args *a) {
    CU_NO_CAPTURE("a collective (nccl)");   /* queued on the legacy stream below: it would run at once, not join the capture */
    ncclComm_t comm = (ncclComm_t)a->comm;
    const cudaStream_t stream = 0;   /* the unit's stream: the legacy default one */
    switch (op) {
    case TN_NCCL_GET_ID: {
        ncclUniqueId id;
        NCCL_CHECK("ncclGetUniqueId", NULL, ncclGetUniqueId(&id));
        memcpy(a->id, &id, sizeof id);
        return 0;
    }
    case TN_NCCL_INIT: {
        ncclUniqueId id;
        memcpy(&id, a->id, sizeof id);
        ncclComm_t c = NULL;
        NCCL_CHECK("ncclCommInitRank", NULL, ncclCommInitRank(&c, a->size, id, a->rank));
        a->comm = c;
        return 0;
    }
    case TN_NCCL_DESTROY:
        if (comm) NCCL_CHECK("ncclCommDestroy", NULL, ncclCommDestroy(comm));
        a->comm = NULL;
        return 0;
    case TN_NCCL_ABORT:
        if (comm) NCCL_CHECK("ncclCommAbort", NULL, ncclCommAbort(comm));
        a->comm = NULL;
        return 0;
    case TN_NCCL_CHECK: {
        ncclResult_t r = ncclSuccess;
        if (!comm) return 0;
        NCCL_CHECK("ncclCommGetAsyncError", comm, ncclCommGetAsyncError(comm, &r));
        return r == ncclSuccess || r == ncclInProgress ? 0 : nccl_fail("the communicator (a peer failed)", r, comm);
    }
    case TN_NCCL_GROUP_START: NCCL_CHECK("ncclGroupStart", NULL, ncclGroupStart()); return 0;
    case TN_NCCL_GROUP_END: NCCL_CHECK("ncclGroupEnd", NULL, ncclGroupEnd()); return 0;
    case TN_NCCL_RECORD: {
        cudaEvent_t e = NULL;
        CU_CHECK("nccl: cudaEventCreate", cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        cudaError_t err = cudaEventRecord(e, stream);
        if (err != cudaSuccess) { cudaEventDestroy(e); return cu_fail("nccl: cudaEventRecord", err); }
        a->event = e;
        return 0;
    }
    case TN_NCCL_QUERY: {
        cudaError_t err = cudaEventQuery((cudaEvent_t)a->event);
        if (err == cudaErrorNotReady) { (void)cudaGetLastError(); return 0; }
        CU_CHECK("nccl: the collective's work", err);   /* a fault in it, reported here */
        return 1;
    }
    case TN_NCCL_RELEASE:
        if (a->event) cudaEventDestroy((cudaEvent_t)a->event);
        a->event = NULL;
        return 0;
    default: break;
    }
    /* the collectives: contiguous device buffers of one dtype */
    if (!comm) return tn_error("nccl: no communicator");
    tn_tensor *t = a->x ? a->x : a->y;
    if (!t || (a->x && a->y && a->x->dtype != a->y->dtype)) return tn_error("nccl: the operands are missing or of different dtypes");
    ncclDataType_t type;
    int64_t per;
    if (!nccl_type(t->dtype, &type, &per)) return tn_error("nccl: dtype %s has no NCCL type", tn_dtype_name(t->dtype));
    for (tn_tensor *u : {a->x, a->y})
        if (u && (u->device != TN_CUDA || !tn_is_contiguous(u))) return tn_error("nccl: the operands must be contiguous CUDA tensors");
    const size_t nx = a->x ? (size_t)(tn_numel(a->x) * per) : 0, ny = a->y ? (size_t)(tn_numel(a->y) * per) : 0;
    void *x = a->x ? tn_data_ptr(a->x) : NULL, *y = a->y ? tn_data_ptr(a->y) : NULL;
#if NCCL_VERSION_CODE < 21000
    if (a->op == TN_DIST_AVG) return tn_error("nccl: ReduceOp.AVG needs NCCL 2.10 or later (ncclAvg); this build has NCCL %d", NCCL_VERSION_CODE);
#endif
    const ncclRedOp_t red = nccl_red(a->op);
    switch (op) {
    case TN_NCCL_ALL_REDUCE: if (ny) NCCL_CHECK("ncclAllReduce", comm, ncclAllReduce(x, y, ny, type, red, comm, stream)); return 0;
    case TN_NCCL_BROADCAST: if (ny) NCCL_CHECK("ncclBroadcast", comm, ncclBroadcast(x, y, ny, type, a->peer, comm, stream)); return 0;
    case TN_NCCL_REDUCE: if (nx) NCCL_CHECK("ncclReduce", comm, ncclReduce(x, y, nx, type, red, a->peer, comm, stream)); return 0;
    case TN_NCCL_ALL_GATHER: if (nx) NCCL_CHECK("ncclAllGather", comm, ncclAllGather(x, y, nx, type, comm, stream)); return 0;
    case TN_NCCL_REDUCE_SCATTER: if (ny) NCCL_CHECK("ncclReduceScatter", comm, ncclReduceScatter(x, y, ny, type, red, comm, stream)); return 0;
    case TN_NCCL_SEND: NCCL_CHECK("ncclSend", comm, ncclSend(x, nx, type, a->peer, comm, stream)); return 0;
    case TN_NCCL_RECV: NCCL_CHECK("ncclRecv", comm, ncclRecv(y, ny, type, a->peer, comm, stream)); return 0;
    default: return tn_error("nccl: unknown op %d", (int)op);
    }
}
#undef NCCL_CHECK
#define CU_NCCL_ENTRY cu_nccl
#else
#define CU_NCCL_ENTRY NULL   /* built without NCCL (NCCL=0, or no nccl.h): init_process_group("nccl") says so */
#endif /* TN_NCCL */

/* ======================================================================= */
/* 9e. CUDA IPC: tn_backend.ipc_* (torch.multiprocessing's CUDA tensors)    */
/* ======================================================================= */
/* A handle names the base of the segment holding a storage (section 2's cu_segment_of), as
   PyTorch's caching allocator shares a block: the receiver maps the whole segment once and
   views the block at its offset (the header caches the mapping per handle). The export
   waits for the work queued so far, so the receiver reads finished values. */
static_assert(sizeof(cudaIpcMemHandle_t) == TN_CUDA_IPC_HANDLE_BYTES, "cudaIpcMemHandle_t is 64 bytes (CUDA_IPC_HANDLE_SIZE)");
/* The handles this process exported: cudaIpcOpenMemHandle maps handles of OTHER processes
   only (a process's own fails with an unhelpful context error), so an import of one of them
   is refused by name, as the stand-in refuses its own pid's. */
static std::mutex cu_ipc_mu;
static std::set<std::string> cu_ipc_exported;
static int cu_ipc_export(tn_storage *s, unsigned char *h, uint64_t *offset, uint64_t *size) {
    CU_NO_CAPTURE("an IPC export");   /* it synchronises */
    char *base = NULL;
    size_t n = 0;
    if (!s->data || !cu_segment_of(s->data, &base, &n))
        return tn_error("CUDA IPC: the storage's memory is not the caching allocator's (from_blob, DLPack, a segment mapped from another process): "
                        "it cannot be exported");
    CU_CHECK("CUDA IPC: waiting for the storage's writes", cudaStreamSynchronize(cu_stream()));
    cudaIpcMemHandle_t hd;
    CU_CHECK("cudaIpcGetMemHandle", cudaIpcGetMemHandle(&hd, base));   /* the base of a cudaMalloc allocation: the segment's */
    memcpy(h, &hd, sizeof hd);
    {
        std::lock_guard<std::mutex> lock(cu_ipc_mu);
        cu_ipc_exported.insert(std::string((const char *)&hd, sizeof hd));
    }
    *offset = (uint64_t)((char *)s->data - base);
    *size = n;
    return 0;
}
static int cu_ipc_import(const unsigned char *h, uint64_t size, void **base) {
    (void)size;
    CU_NO_CAPTURE("an IPC import");
    cudaIpcMemHandle_t hd;
    memcpy(&hd, h, sizeof hd);
    {
        std::lock_guard<std::mutex> lock(cu_ipc_mu);
        if (cu_ipc_exported.count(std::string((const char *)&hd, sizeof hd)))
            return tn_error("CUDA IPC: the handle is this process's own (cudaIpcOpenMemHandle maps another process's memory only): "
                            "use the tensor that was sent");
    }
    void *p = NULL;
    const cudaError_t e = cudaIpcOpenMemHandle(&p, hd, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return tn_error("CUDA IPC: cudaIpcOpenMemHandle failed: %s (%s): the exporting process may have exited or freed the tensor (the producer "
                        "keeps it alive while consumers use it), or the handle is this process's own", cudaGetErrorName(e), cudaGetErrorString(e));
    }
    *base = p;
    return 0;
}
static int cu_ipc_close(void *base, uint64_t size) {
    (void)size;
    CU_CHECK("cudaIpcCloseMemHandle", cudaIpcCloseMemHandle(base));
    return 0;
}

/* ======================================================================= */
/* 10. the backend table and the unit                                       */
/* ======================================================================= */
static const tn_backend cuda_backend = {
    "cuda", cu_alloc, cu_free, cu_copy, cu_fill, cu_unary, cu_binary, cu_ternary, cu_reduce, cu_lane, cu_index,
    cu_nonzero, cu_matmul, cu_random, cu_im2col, cu_pool_argmax, cu_optim, cu_conv2d, cu_batch_norm, cu_pool2d, cu_layer_norm, cu_cross_entropy, cu_attention,
    cu_check_index, cu_optim_multi, cu_linalg, cu_matmul_ep, cu_fft,
    cu_graph_begin, cu_graph_end, cu_graph_launch, cu_graph_free, CU_NCCL_ENTRY, cu_graph_pool,
    cu_ipc_export, cu_ipc_import, cu_ipc_close, cu_fused_elementwise,
};

static int u_device_count(void) { int n = 0; return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0; }
static int u_set_device(int index) {
    int n = u_device_count();
    if (index < 0 || index >= n) return tn_error("tn_cuda_set_device: device %d does not exist (%d device%s)", index, n, n == 1 ? "" : "s");
    CU_CHECK("tn_cuda_set_device", cudaSetDevice(index));
    return 0;
}
static int u_current_device(void) { int d = -1; return cudaGetDevice(&d) == cudaSuccess ? d : -1; }
static int u_synchronize(void) {
    CU_CHECK("tn_cuda_synchronize", cudaDeviceSynchronize());
    n_syncs++;
    return 0;
}
static tn_cuda_stats u_memory_stats(void) {
    Allocator &a = allocator();
    tn_cuda_stats st;
    {
        std::lock_guard<std::mutex> lock(a.mu);
        st = a.st;
    }
    st.num_h2d = n_h2d;
    st.num_d2h = n_d2h;
    st.num_syncs = n_syncs;
    st.num_cudnn_conv = n_dnn_conv; st.num_conv_fallbacks = n_conv_fallbacks; st.num_cudnn_algo_retries = n_algo_retries;
    st.num_cudnn_pool = n_dnn_pool; st.num_pool_fallbacks = n_pool_fallbacks; st.num_cudnn_batch_norm = n_dnn_bn; st.num_batch_norm_fallbacks = n_bn_fallbacks;
    st.num_fused_attention = n_attn; st.num_attention_fallbacks = n_attn_fallbacks;
    st.num_multi_tensor_optim = n_optim_multi;
    st.num_gemm_epilogue = n_gemm_ep; st.num_gemm_epilogue_fallbacks = n_gemm_ep_fallbacks;
    return st;
}
static void u_reset_peak(void) {
    Allocator &a = allocator();
    std::lock_guard<std::mutex> lock(a.mu);
    a.st.peak_allocated = a.st.allocated;
    a.st.peak_reserved = a.st.reserved;
}
static void u_empty_cache(void) {
    Allocator &a = allocator();
    std::lock_guard<std::mutex> lock(a.mu);
    a.release_cached();
}
static void *u_host_alloc(size_t nbytes) {
    void *p = NULL;
    if (cudaHostAlloc(&p, nbytes, cudaHostAllocDefault) != cudaSuccess) { (void)cudaGetLastError(); return NULL; }
    return p;
}
static void u_host_free(void *p) {
    pinned_release(p);
    cudaFreeHost(p);
}

extern "C" const tn_cuda_unit *tn_cuda_unit_get(void) {
    static tn_cuda_unit unit;
    static char reason[512];
    static std::once_flag once;
    std::call_once(once, [] {
        memset(&unit, 0, sizeof unit);
        unit.device_count = u_device_count;
        unit.set_device = u_set_device;
        unit.current_device = u_current_device;
        unit.synchronize = u_synchronize;
        unit.memory_stats = u_memory_stats;
        unit.reset_peak = u_reset_peak;
        unit.empty_cache = u_empty_cache;
        unit.host_alloc = u_host_alloc;
        unit.host_free = u_host_free;
        unit.copy_async = cu_copy_async;
        int n = 0, drv = 0, rt = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        if (drv == 0 && e != cudaSuccess)
            snprintf(reason, sizeof reason, "no NVIDIA driver was found (%s: %s)", cudaGetErrorName(e), cudaGetErrorString(e));
        else if (e == cudaErrorInsufficientDriver) /* an older minor version still runs the sm_80/sm_90 code */
            snprintf(reason, sizeof reason, "the NVIDIA driver is too old (it supports CUDA %d.%d; this unit was built with CUDA %d.%d)",
                     drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
        else if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) snprintf(reason, sizeof reason, "no CUDA GPU was found");
        else if (e != cudaSuccess) snprintf(reason, sizeof reason, "the CUDA runtime failed to start: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
        if (e != cudaSuccess) (void)cudaGetLastError();
        if (!reason[0]) { /* a GPU whose architecture the build has no code for fails every launch: say so now */
            cudaFuncAttributes fa;
            cudaError_t ke = cudaFuncGetAttributes(&fa, k_fill<float>);
            if (ke != cudaSuccess) {
                cudaDeviceProp prop;
                int dev = 0;
                cudaGetDevice(&dev);
                bool named = cudaGetDeviceProperties(&prop, dev) == cudaSuccess;
                snprintf(reason, sizeof reason, "the GPU (%s, sm_%d%d) is not among the architectures this unit was built for (CUDA_ARCH): %s",
                         named ? prop.name : "?", named ? prop.major : 0, named ? prop.minor : 0, cudaGetErrorString(ke));
                (void)cudaGetLastError();
            }
        }
        unit.reason = reason;
        unit.backend = reason[0] ? NULL : &cuda_backend;
    });
    return &unit;
}
