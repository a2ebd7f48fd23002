// The AVX-512 build of attention's two inner loops over dimension-major K (attention.cpp), run
// only where cpuFeatures().canRunAvx512() (avx512Enabled()). The arithmetic contract is the AVX2
// path's and so the reference's: each score is a chain of fused multiply-adds in dimension
// order, one position per lane, times the scale; each V sum element a chain of fused
// multiply-adds in position order, one dimension per lane. A ZMM register holds sixteen
// positions (one block row of dimension-major K, blockSize % 16 == 0) or sixteen dimensions, so
// each instruction does twice the AVX2 work; the order of every lane's operations is unchanged.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/avx2/attention_prefetch.h"
#include "kernels/cpu/avx2/kernels.h"

// GCC 12's avx512fintrin.h seeds _mm512_cvtph_ps with an _mm512_undefined_ps value that
// -Wmaybe-uninitialized reports at every use (a false positive: the unmasked form never reads it).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace hearth::avx2 {
namespace {

inline __m512 loadHalves16(const f16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// out[r][16c + j] = (Σ_i q_r[i]·k_{p+16c+j}[i]) · scale for nq queries and nc chunks of sixteen
// positions from p: nq·nc independent chains, in dimension order. Prefetches each chunk's K
// kPrefetchPositions on (ahead) and the chunk's own V rows (vAhead), a line per line read.
template <int nq, int nc>
void scoreChunks16(const AttentionHead& h, int p, const float* const* q, float* const* out, const char* const* ahead,
                   const char* const* vAhead) {
    const f16_t* base[nc];
    for (int c = 0; c < nc; ++c) base[c] = kDimMajorAt(h, p + 16 * c);
    __m512 dot[nq][nc];
    for (int r = 0; r < nq; ++r)
        for (int c = 0; c < nc; ++c) dot[r][c] = _mm512_setzero_ps();
    const int rowBytes = h.blockSize * static_cast<int>(sizeof(f16_t));  // one dimension's positions
    for (int i = 0; i < h.headDim; ++i) {
        // One prefetch per line consumed (attention_prefetch.h): the same line of a later chunk.
        if ((i * rowBytes) % 64 == 0)
            for (int c = 0; c < nc; ++c)
                if (ahead[c]) _mm_prefetch(ahead[c] + i * rowBytes, kPrefetchHint);
        if ((i * rowBytes) % 64 == 0)
            for (int c = 0; c < nc; ++c)
                if (vAhead[c]) _mm_prefetch(vAhead[c] + i * rowBytes, kPrefetchHint);
        __m512 k[nc];
        for (int c = 0; c < nc; ++c) k[c] = loadHalves16(base[c] + i * h.blockSize);
        for (int r = 0; r < nq; ++r) {
            const __m512 qi = _mm512_set1_ps(q[r][i]);
            for (int c = 0; c < nc; ++c) dot[r][c] = _mm512_fmadd_ps(qi, k[c], dot[r][c]);
        }
    }
    const __m512 scale = _mm512_set1_ps(h.scale);
    for (int r = 0; r < nq; ++r)
        for (int c = 0; c < nc; ++c) _mm512_storeu_ps(out[r] + 16 * c, _mm512_mul_ps(dot[r][c], scale));
}

template <int nc>
void scoreGroup16(int nq, const AttentionHead& h, int p, const float* const* q, float* const* out,
                  const char* const* ahead, const char* const* vAhead) {
    if (nq == 4) scoreChunks16<4, nc>(h, p, q, out, ahead, vAhead);
    else if (nq == 3) scoreChunks16<3, nc>(h, p, q, out, ahead, vAhead);
    else if (nq == 2) scoreChunks16<2, nc>(h, p, q, out, ahead, vAhead);
    else scoreChunks16<1, nc>(h, p, q, out, ahead, vAhead);
}

template <int nq, int nv>
void accumulate16(const AttentionHead& h, int d0, int a, int b, const float* w, int stride, int lo, float* acc) {
    __m512 sum[nq][nv];
    for (int r = 0; r < nq; ++r)
        for (int k = 0; k < nv; ++k) sum[r][k] = _mm512_loadu_ps(acc + r * kMaxAttentionHeadDim + d0 + 16 * k);
    VRowsAhead ahead(h, a, d0 == 0 ? b : a);  // the first run of dimensions streams the rows ahead
    for (int p = a; p < b;) {
        const int blockEnd = std::min(b, (p / h.blockSize + 1) * h.blockSize);
        const f16_t* v = vRowAt(h, p) + d0;
        const int step = vRowStep(h);
        // The block's run on copies of the sums, as accumulateShared (attention.cpp) does: GCC
        // otherwise stores all nq * nv sums to the stack after every position.
        __m512 run[nq][nv];
        for (int r = 0; r < nq; ++r)
            for (int k = 0; k < nv; ++k) run[r][k] = sum[r][k];
        for (; p < blockEnd; ++p, v += step) {
            ahead.step();
            __m512 row[nv];
            for (int k = 0; k < nv; ++k) row[k] = loadHalves16(v + 16 * k);
            for (int r = 0; r < nq; ++r) {
                const __m512 wp = _mm512_set1_ps(w[r * stride + (p - lo)]);
                for (int k = 0; k < nv; ++k) run[r][k] = _mm512_fmadd_ps(wp, row[k], run[r][k]);
            }
        }
        for (int r = 0; r < nq; ++r)
            for (int k = 0; k < nv; ++k) sum[r][k] = run[r][k];
    }
    for (int r = 0; r < nq; ++r)
        for (int k = 0; k < nv; ++k) _mm512_storeu_ps(acc + r * kMaxAttentionHeadDim + d0 + 16 * k, sum[r][k]);
}

// Dimensions in runs of as many vectors as 32 registers hold for nq queries, a shorter run for
// what is left (headDim 64 with three queries: one run of four vectors, one pass over the V
// rows, rather than four passes of one); a last run of eight dimensions (headDim % 16 == 8) by
// the AVX2 lanes' arithmetic on the low half.
template <int nq>
void accumulateQueries16(const AttentionHead& h, int a, int b, const float* w, int stride, int lo, float* acc) {
    constexpr int maxNv = nq <= 2 ? 8 : nq == 3 ? 6 : 5;
    int d0 = 0;
    while (d0 + 16 <= h.headDim) {
        const int nv = std::min(maxNv, (h.headDim - d0) / 16);
        switch (nv) {
        case 8: accumulate16<nq, (maxNv >= 8 ? 8 : 1)>(h, d0, a, b, w, stride, lo, acc); break;
        case 7: accumulate16<nq, (maxNv >= 7 ? 7 : 1)>(h, d0, a, b, w, stride, lo, acc); break;
        case 6: accumulate16<nq, (maxNv >= 6 ? 6 : 1)>(h, d0, a, b, w, stride, lo, acc); break;
        case 5: accumulate16<nq, 5>(h, d0, a, b, w, stride, lo, acc); break;
        case 4: accumulate16<nq, 4>(h, d0, a, b, w, stride, lo, acc); break;
        case 3: accumulate16<nq, 3>(h, d0, a, b, w, stride, lo, acc); break;
        case 2: accumulate16<nq, 2>(h, d0, a, b, w, stride, lo, acc); break;
        default: accumulate16<nq, 1>(h, d0, a, b, w, stride, lo, acc); break;
        }
        d0 += 16 * nv;
    }
    if (d0 < h.headDim) {  // eight dimensions left
        for (int r = 0; r < nq; ++r) {
            __m256 sum = _mm256_load_ps(acc + r * kMaxAttentionHeadDim + d0);
            for (int p = a; p < b; ++p) {
                const f16_t* v = vRowAt(h, p) + d0;
                sum = _mm256_fmadd_ps(_mm256_set1_ps(w[r * stride + (p - lo)]),
                                      _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v))), sum);
            }
            _mm256_store_ps(acc + r * kMaxAttentionHeadDim + d0, sum);
        }
    }
}

}  // namespace

void scoreQueriesAvx512(const AttentionHead& h, const float* q, int n, int lo, int hi, int stride, float* scores) {
    const char* none[3] = {nullptr, nullptr, nullptr};
    for (int p = lo; p < hi; p += 48) {
        const int nc = std::min(3, (hi - p + 15) / 16);  // with the queries, enough chains for both FMA units
        const char* ahead[3] = {nullptr, nullptr, nullptr};
        for (int c = 0; c < nc; ++c) ahead[c] = kAhead(h, p + 16 * c, hi);
        // The chunks' V rows too (head-major V: a chunk's rows are one run, as long as its K), for
        // the V pass after the softmax: read from L2 there, while the K lines keep the memory
        // busy here. attention_bench 8064 2 10 (SmolLM2's shape, this Xeon), four alternations:
        // 20.6-20.8 GB/s before, 21.5-22.3 after.
        const char* vAhead[3] = {nullptr, nullptr, nullptr};
        if (h.vHeadMajor && h.blockSize == 16)
            for (int c = 0; c < nc; ++c)
                if (p + 16 * c < hi) vAhead[c] = reinterpret_cast<const char*>(vRowAt(h, p + 16 * c));
        for (int r0 = 0; r0 < n; r0 += 4) {
            const float* qs[4];
            float* outs[4];
            const int m = std::min(4, n - r0);
            for (int k = 0; k < m; ++k) {
                qs[k] = q + (r0 + k) * kMaxAttentionHeadDim;
                outs[k] = scores + (r0 + k) * stride + (p - lo);
            }
            const char* const* pf = r0 == 0 ? ahead : none;  // the first group prefetches
            const char* const* vpf = r0 == 0 ? vAhead : none;
            if (nc == 3) scoreGroup16<3>(m, h, p, qs, outs, pf, vpf);
            else if (nc == 2) scoreGroup16<2>(m, h, p, qs, outs, pf, vpf);
            else scoreGroup16<1>(m, h, p, qs, outs, pf, vpf);
        }
    }
}

void accumulateVSharedAvx512(const AttentionHead& h, int n, int a, int b, const float* weights, int stride, int lo,
                             float* acc) {
    for (int r0 = 0; r0 < n; r0 += 4) {
        const float* w = weights + r0 * stride;
        float* out = acc + r0 * kMaxAttentionHeadDim;
        switch (std::min(4, n - r0)) {
        case 4: accumulateQueries16<4>(h, a, b, w, stride, lo, out); break;
        case 3: accumulateQueries16<3>(h, a, b, w, stride, lo, out); break;
        case 2: accumulateQueries16<2>(h, a, b, w, stride, lo, out); break;
        default: accumulateQueries16<1>(h, a, b, w, stride, lo, out); break;
        }
    }
}

}  // namespace hearth::avx2
