/* emulate_attention.cpp — tensor_cuda.cu's fused attention kernels run on the CPU, where no
 * GPU is at hand: one std::thread per CUDA thread, barriers for __syncthreads/__syncwarp,
 * __shfl_xor_sync through per-warp slots, shared memory a buffer of the launch's exact size
 * (filled with garbage). The kernels' text is cut from tensor_cuda.cu by `make
 * emulate-attention` (build/attn_kernels.inc), launched as cu_attention launches them, and
 * compared with a double-precision reference: out, logsumexp, dq, dk, dv; causal or not,
 * bool and additive masks (broadcast, strided), a fully masked row, L != S, head dims 16 to
 * 128, strided and broadcast q and k, float32 (64-row tiles), float64 (32-row tiles) and
 * bfloat16/float16 storage computed in float32 tiles (the reference from the rounded inputs).
 * It checks indexing, masking and tiling, not the GPU's memory model or speed. */
#include <barrier>
#include <thread>
#include <vector>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <random>
#include <memory>
#include <type_traits>
#define TN_MAX_DIMS 8
struct Dim3 { unsigned x; };
static thread_local Dim3 threadIdx, blockIdx;
static Dim3 blockDim, gridDim;
struct Warp { std::barrier<> *bar; double slot[32]; };
static std::vector<Warp> g_warps;
static std::barrier<> *g_block;
static std::vector<unsigned char> g_smem;
static thread_local int t_lane, t_warp;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(x)
static void __syncthreads() { g_block->arrive_and_wait(); }
static void __syncwarp() { g_warps[t_warp].bar->arrive_and_wait(); }
template <class T> static T __shfl_xor_sync(unsigned, T v, int w) {
    Warp &W = g_warps[t_warp];
    W.slot[t_lane] = (double)v;
    W.bar->arrive_and_wait();
    T r = (T)W.slot[t_lane ^ w];
    W.bar->arrive_and_wait();
    return r;
}
/* what the kernels' text takes from the rest of tensor_cuda.cu: the vector types, the half
   storage types and their conversions (round to nearest even; the unit's are tensor.h's) */
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
struct bf16 { uint16_t b; };
struct h16 { uint16_t b; };
static float bf16_f(bf16 h) { uint32_t w = (uint32_t)h.b << 16; float f; memcpy(&f, &w, 4); return f; }
static bf16 to_bf16(float v, bool) {
    uint32_t w;
    memcpy(&w, &v, 4);
    if (v != v) return bf16{0x7FC0};
    w += 0x7FFFu + ((w >> 16) & 1u);
    return bf16{(uint16_t)(w >> 16)};
}
static float h16_f(h16 h) { _Float16 x; memcpy(&x, &h.b, 2); return (float)x; }
static h16 to_h16(float v) { _Float16 x = (_Float16)v; h16 r; memcpy(&r.b, &x, 2); return r; }
#define __host__
#define ATTN_SMEM unsigned char *attn_smem = g_smem.data();
#include "attn_kernels.inc"
template <class F> static void launch(unsigned grid, unsigned block, size_t smem, F f) {
    blockDim.x = block; gridDim.x = grid;
    for (unsigned b = 0; b < grid; b++) {
        g_smem.assign(smem ? smem : 1, 0xff);   // garbage: NaN-ish bytes
        std::barrier<> blk((std::ptrdiff_t)block);
        g_block = &blk;
        int nw = (block + 31) / 32;
        std::vector<std::unique_ptr<std::barrier<>>> wb;
        g_warps.assign(nw, Warp{});
        for (int w = 0; w < nw; w++) { wb.emplace_back(new std::barrier<>(32)); g_warps[w].bar = wb.back().get(); }
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < block; t++) ts.emplace_back([=] { threadIdx.x = t; blockIdx.x = b; t_lane = t & 31; t_warp = t / 32; f(); });
        for (auto &t : ts) t.join();
    }
}
// ---- a problem: batch dims {B1, B2}; q [B1,B2,L,E] with strides maybe odd; mask broadcast ----
template <class T> struct Prob {
    int64_t B1, B2, L, S, E, Ev; int mask_kind; bool causal; double scale;
    std::vector<T> q, k, v, m; // q stored with row pitch E+3 and batch stride; k broadcast over B2 (stride 0)
    int64_t qrs, qbs1, qbs2, krs, kbs1, vrs, vbs1, vbs2, mrs, mcs, mbs1;
};
static std::mt19937 rng(5);
static double rn() { return std::normal_distribution<double>(0, 1)(rng); }
template <class S> static S to_s(double x) { return (S)x; }
template <> bf16 to_s<bf16>(double x) { return to_bf16((float)x, true); }
template <> h16 to_s<h16>(double x) { return to_h16((float)x); }
static double from_s(float x) { return x; }
static double from_s(double x) { return x; }
static double from_s(bf16 x) { return bf16_f(x); }
static double from_s(h16 x) { return h16_f(x); }
template <class T, int BR, int BC, int NO, class St = T> static int check(int64_t B1, int64_t B2, int64_t L, int64_t S, int E, int Ev, int mask_kind, bool causal, double tol,
                                                       bool masked_row) {
    double scale = 1 / std::sqrt((double)E) * 1.3;
    int64_t B = B1 * B2;
    // layouts: q [B1, B2, L, E] with row pitch E + 3; k [B1, 1->B2, S, E] (stride 0 over B2), v contiguous
    int64_t qrs = E + 3, qbs2 = L * qrs, qbs1 = B2 * qbs2;
    std::vector<St> q(B1 * qbs1), k(B1 * S * E), v(B * S * Ev);
    std::vector<T> mk(L * S * 2 + 1);
    for (auto &x : q) x = to_s<St>(rn());
    for (auto &x : k) x = to_s<St>(rn());
    for (auto &x : v) x = to_s<St>(rn());
    // mask [L, S] broadcast over batch (batch strides 0), column stride 2 (strided)
    int64_t mrs = 2 * S, mcs = 2;
    bool *mb = (bool *)mk.data();   // bool view: reuse storage as bytes (enough room)
    std::vector<unsigned char> mbool(L * S * 2 + 1);
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < S; j++) {
            mk[i * mrs + j * mcs] = (T)rn();
            mbool[i * mrs + j * mcs] = (rn() > -0.7) && !(masked_row && i == 1);
            if (masked_row && i == 1 && mask_kind == 2) mk[i * mrs + j * mcs] = -INFINITY;
        }
    (void)mb;
    AttnGeo g;
    memset(&g, 0, sizeof g);
    g.nb = 2; g.bshape[0] = B1; g.bshape[1] = B2;
    g.qb[0] = qbs1; g.qb[1] = qbs2; g.kb[0] = S * E; g.kb[1] = 0; g.vb[0] = B2 * S * Ev; g.vb[1] = S * Ev; g.mb[0] = 0; g.mb[1] = 0;
    g.rq = qrs; g.rk = E; g.rv = Ev; g.rm = mrs; g.cm = mcs; g.L = L; g.S = S; g.E = E; g.Ev = Ev; g.mask_kind = mask_kind; g.causal = causal; g.scale = scale;
    const void *mp = mask_kind == 1 ? (const void *)mbool.data() : mask_kind == 2 ? (const void *)mk.data() : nullptr;
    std::vector<St> out(B * L * Ev), dout(B * L * Ev), dq(B * L * E, to_s<St>(7)), dk(B * S * E, to_s<St>(7)), dv(B * S * Ev, to_s<St>(7));
    std::vector<T> lse(B * L), D(B * L);
    for (auto &x : dout) x = to_s<St>(rn());
    const int pq = attn_pitch<T>(E), pv = attn_pitch<T>(Ev);
    const int64_t nqt = (L + BR - 1) / BR, nkt = (S + BR - 1) / BR;
    size_t fb = (size_t)((BR + BC) * pq + BC * pv + BR * attn_pp<T, BC>()) * sizeof(T);
    launch((unsigned)(B * nqt), 4 * BR, fb, [&] { k_attn_fwd<T, St, BR, BC, NO>(g, q.data(), k.data(), v.data(), mp, out.data(), lse.data()); });
    launch((unsigned)((B * L * 32 + 255) / 256), 256, 0, [&] { k_attn_rowdot<T, St>(B * L, Ev, dout.data(), out.data(), D.data()); });
    size_t bb = (size_t)((BR + BC) * (pq + pv) + BR * attn_pp<T, BC>() + 2 * BC) * sizeof(T);
    launch((unsigned)(B * nkt), 4 * BR, bb, [&] { k_attn_bwd_kv<T, St, BR, BC, NO>(g, q.data(), k.data(), v.data(), mp, dout.data(), lse.data(), D.data(), dk.data(), dv.data()); });
    launch((unsigned)(B * nqt), 4 * BR, bb, [&] { k_attn_bwd_q<T, St, BR, BC, NO>(g, q.data(), k.data(), v.data(), mp, dout.data(), lse.data(), D.data(), dq.data()); });
    // reference in double
    int bad = 0;
    double maxerr = 0;
    auto cmp = [&](const char *what, double a, double r) {
        bool ok = (std::isnan(a) && std::isnan(r)) || (!std::isnan(a) && !std::isnan(r) && std::fabs(a - r) <= tol * (1 + std::fabs(r)));
        if (!std::isnan(r)) maxerr = std::max(maxerr, std::fabs(a - r));
        if (!ok && bad++ < 5) printf("  MISMATCH %s: %.9g vs ref %.9g\n", what, a, r);
    };
    for (int64_t b1 = 0; b1 < B1; b1++)
        for (int64_t b2 = 0; b2 < B2; b2++) {
            int64_t b = b1 * B2 + b2;
            const St *Q = q.data() + b1 * qbs1 + b2 * qbs2, *K = k.data() + b1 * S * E, *V = v.data() + b * S * Ev;
            std::vector<double> P(L * S), dP(L * S), dS(L * S), lsr(L);
            for (int64_t i = 0; i < L; i++) {
                double mx = -INFINITY;
                std::vector<double> s(S);
                for (int64_t j = 0; j < S; j++) {
                    double a = 0;
                    for (int e = 0; e < E; e++) a += from_s(Q[i * qrs + e]) * from_s(K[j * E + e]);
                    a *= scale;
                    if (mask_kind == 1 && !mbool[i * mrs + j * mcs]) a = -INFINITY;
                    if (mask_kind == 2) a += mk[i * mrs + j * mcs];
                    if (causal && j > i) a = -INFINITY;
                    s[j] = a;
                    mx = std::max(mx, a);
                }
                double sum = 0;
                for (int64_t j = 0; j < S; j++) sum += mx == -INFINITY ? 0 : std::exp(s[j] - mx);
                lsr[i] = sum > 0 ? mx + std::log(sum) : NAN;
                for (int64_t j = 0; j < S; j++) P[i * S + j] = std::exp(s[j] - lsr[i]);
                cmp("lse", lse[b * L + i], lsr[i]);
                for (int e = 0; e < Ev; e++) {
                    double o = 0;
                    for (int64_t j = 0; j < S; j++) o += P[i * S + j] * from_s(V[j * Ev + e]);
                    cmp("out", from_s(out[(b * L + i) * Ev + e]), o);
                }
            }
            // gradients (the CPU's rules): dS = P (dP - D), D = rowsum(dout * out) from the kernel's out
            for (int64_t i = 0; i < L; i++) {
                double Di = 0;
                for (int e = 0; e < Ev; e++) Di += from_s(dout[(b * L + i) * Ev + e]) * from_s(out[(b * L + i) * Ev + e]);
                for (int64_t j = 0; j < S; j++) {
                    double a = 0;
                    for (int e = 0; e < Ev; e++) a += from_s(dout[(b * L + i) * Ev + e]) * from_s(V[j * Ev + e]);
                    dS[i * S + j] = (mask_kind != 2 && std::isnan(lsr[i])) ? 0 : P[i * S + j] * (a - Di);
                }
            }
            for (int64_t i = 0; i < L; i++)
                for (int e = 0; e < E; e++) {
                    double a = 0;
                    for (int64_t j = 0; j < S; j++) a += dS[i * S + j] * from_s(K[j * E + e]);
                    cmp("dq", from_s(dq[(b * L + i) * E + e]), a * scale);
                }
            for (int64_t j = 0; j < S; j++) {
                for (int e = 0; e < E; e++) {
                    double a = 0;
                    for (int64_t i = 0; i < L; i++) a += dS[i * S + j] * from_s(Q[i * qrs + e]);
                    cmp("dk", from_s(dk[(b * S + j) * E + e]), a * scale);
                }
                for (int e = 0; e < Ev; e++) {
                    double a = 0;
                    for (int64_t i = 0; i < L; i++) a += P[i * S + j] * from_s(dout[(b * L + i) * Ev + e]);
                    cmp("dv", from_s(dv[(b * S + j) * Ev + e]), a);
                }
            }
        }
    printf("%s BR %d NO %d B %lldx%lld L %lld S %lld E %d Ev %d mask %d causal %d masked_row %d: %s (max abs err %.3g)\n",
           sizeof(St) == 2 ? (std::is_same<St, bf16>::value ? "bf16" : "f16") : sizeof(T) == 4 ? "f32" : "f64", BR, NO,
           (long long)B1, (long long)B2, (long long)L, (long long)S, E, Ev, mask_kind, causal, masked_row, bad ? "FAIL" : "ok", maxerr);
    return bad != 0;
}
int main() {
    int f = 0;
    f += check<float, 64, 64, 4>(1, 2, 70, 70, 64, 64, 0, true, 1e-4, false);
    f += check<float, 64, 64, 4>(2, 1, 33, 100, 40, 24, 0, false, 1e-4, false);
    f += check<float, 64, 64, 4>(1, 2, 33, 100, 40, 24, 0, true, 1e-4, false);
    f += check<float, 64, 64, 4>(1, 1, 90, 20, 40, 40, 0, true, 1e-4, false);
    f += check<float, 64, 64, 4>(2, 2, 20, 70, 16, 8, 2, false, 1e-4, false);
    f += check<float, 64, 64, 4>(1, 2, 70, 30, 16, 8, 1, false, 1e-4, false);
    f += check<float, 64, 64, 4>(1, 2, 10, 30, 16, 8, 1, false, 1e-4, true);
    f += check<float, 64, 64, 8>(1, 1, 65, 65, 128, 128, 0, true, 1e-4, false);
    f += check<float, 64, 64, 8>(1, 1, 5, 9, 100, 3, 2, false, 1e-4, false);
    f += check<double, 32, 32, 4>(1, 2, 37, 45, 24, 16, 0, false, 1e-10, false);
    f += check<double, 32, 32, 8>(1, 1, 40, 33, 128, 72, 2, true, 1e-10, false);
    f += check<double, 32, 32, 4>(1, 2, 10, 30, 16, 8, 2, false, 1e-10, true);
    /* half storage: float32 tiles; each result rounded once (bf16 keeps 8 bits, f16 11) */
    f += check<float, 64, 64, 4, bf16>(1, 2, 70, 70, 64, 64, 0, true, 1e-2, false);
    f += check<float, 64, 64, 4, bf16>(1, 2, 33, 100, 40, 24, 2, false, 1e-2, false);
    f += check<float, 64, 64, 8, h16>(1, 1, 65, 65, 128, 72, 1, true, 2e-3, false);
    printf("%d failed\n", f);
    return f != 0;
}
