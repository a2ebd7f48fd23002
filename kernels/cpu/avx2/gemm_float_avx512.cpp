// The AVX-512 build of the float-type prefill gemm (gemm_float.cpp), run only where
// cpuFeatures().canRunAvx512() (avx512Enabled()). The arithmetic contract is unchanged: each
// (row, token) keeps the reference's eight float lanes (element i in lane i % 8, one FMA per
// element, quants.h) and combines them in its fixed tree, so every value is bitwise the
// vecDot's and the AVX2 build's. What changes is how many lane vectors one instruction holds:
// a ZMM register carries the eight lanes of two rows (rows 2p and 2p + 1 of the panel, side
// by side, so the panel is stored in pairs interleaved per group of 8 columns) against one
// token, whose eight activations are broadcast to both halves. A tile is the whole panel (4
// row pairs) × 3 tokens: 12 accumulators, 16 multiply-adds per FMA instead of 8.
#include "kernels/cpu/avx2/float_lanes.h"
#include "kernels/cpu/avx2/kernels.h"

// GCC 12's avx512fintrin.h seeds _mm512_broadcast_f64x4 and _mm512_extractf64x4_pd with an
// _mm512_undefined_* value that -Wmaybe-uninitialized reports at every use (a false positive:
// the unmasked forms never read it).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace hearth::avx2 {
namespace {

constexpr int kPairs = kPanelRows / 2;
constexpr int kTileTokens = 3;

// Row h of pair p (n elements of L::T) into the interleaved panel: group g of 8 columns at
// pairBase + g * 16 + h * 8; the padding of the last group zero.
template <class L>
void rowToPairs(const void* src, int64_t n, float* pairBase, int h) {
    const auto* p = static_cast<const typename L::T*>(src);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_store_ps(pairBase + 2 * i + h * 8, L::load8(p + i));
    if (i < n) {
        alignas(32) float tail[8] = {};
        for (int64_t k = i; k < n; ++k) tail[k - i] = L::one(p[k]);
        _mm256_store_ps(pairBase + 2 * i + h * 8, _mm256_load_ps(tail));
    }
}

void rowToPairs(DType t, const void* src, int64_t n, float* pairBase, int h) {
    switch (t) {
    case DType::F16: return rowToPairs<F16Loader>(src, n, pairBase, h);
    case DType::BF16: return rowToPairs<Bf16Loader>(src, n, pairBase, h);
    default: return rowToPairs<F32Loader>(src, n, pairBase, h);
    }
}

// Eight floats in both halves of a ZMM register (vbroadcastf64x4: AVX512F alone).
inline __m512 broadcast8(const float* p) {
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(p))));
}

struct TileJob {
    const float* panel;  // kPairs pairs, 2 * n8 floats apart
    int64_t n8;
    const float* x[kTileTokens];
    int64_t begin, end, nCols;
    __m512* acc;  // [kPairs][NT]
    float* y;  // y[t * yStride + r], r the panel's row
    int64_t yStride;
};

template <int NT>
void tile(const TileJob& j) {
    __m512 acc[kPairs][NT];
    for (int p = 0; p < kPairs; ++p)
        for (int t = 0; t < NT; ++t)
            acc[p][t] = j.begin == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(&j.acc[p * NT + t]);
    const int64_t fullEnd = j.end < j.nCols / 8 * 8 ? j.end : j.nCols / 8 * 8;
    for (int64_t i = j.begin; i < fullEnd; i += 8) {
        __m512 wv[kPairs];
        for (int p = 0; p < kPairs; ++p) {
            wv[p] = _mm512_load_ps(j.panel + p * 2 * j.n8 + 2 * i);
            // In a register: GCC would otherwise fold this load into each of the NT FMAs that
            // use it, and the loads, not the FMAs, would set the pace.
            __asm__("" : "+v"(wv[p]));
        }
        for (int t = 0; t < NT; ++t) {
            const __m512 a = broadcast8(j.x[t] + i);
            for (int p = 0; p < kPairs; ++p) acc[p][t] = _mm512_fmadd_ps(wv[p], a, acc[p][t]);
        }
    }
    if (fullEnd < j.end) {  // the last, partial group: lanes past nCols % 8 keep their value
        const unsigned low = (1u << (j.nCols % 8)) - 1u;
        const auto mask = static_cast<__mmask16>(low | low << 8);
        for (int p = 0; p < kPairs; ++p) {
            const __m512 wv = _mm512_load_ps(j.panel + p * 2 * j.n8 + 2 * fullEnd);
            for (int t = 0; t < NT; ++t)
                acc[p][t] = _mm512_mask3_fmadd_ps(wv, broadcast8(j.x[t] + fullEnd), acc[p][t], mask);
        }
    }
    for (int p = 0; p < kPairs; ++p)
        for (int t = 0; t < NT; ++t) {
            if (j.end == j.nCols) {
                const __m256 lo = _mm512_castps512_ps256(acc[p][t]);
                const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[p][t]), 1));
                j.y[t * j.yStride + 2 * p] = combineLanes(lo);
                j.y[t * j.yStride + 2 * p + 1] = combineLanes(hi);
            } else {
                _mm512_storeu_ps(&j.acc[p * NT + t], acc[p][t]);
            }
        }
}

void runTile(int nt, const TileJob& j) {
    switch (nt) {
    case 6: return tile<6>(j);
    case 5: return tile<5>(j);
    case 4: return tile<4>(j);
    case 3: return tile<3>(j);
    case 2: return tile<2>(j);
    default: return tile<1>(j);
    }
}

// As gemm_float.cpp's tokenChunk: tokens [t0, t1) through the panel kChunkCols columns at a
// time, the first chunk prefetching the next panel's weight rows a slice before each tile.
void tokenChunk(const MatmulArgs& m, const float* panel, const float* x, int64_t row0, int64_t t0, int64_t t1,
                __m512* acc) {
    const int64_t n8 = paddedCols(m.nCols);
    const NextPanelPrefetch prefetch(
        m, row0, (m.nCols + kChunkCols - 1) / kChunkCols * ((t1 - t0 + kTileTokens - 1) / kTileTokens));
    int64_t tileIndex = 0;
    for (int64_t begin = 0; begin < m.nCols; begin += kChunkCols) {
        const int64_t end = begin + kChunkCols < m.nCols ? begin + kChunkCols : m.nCols;
        for (int64_t t = t0; t < t1; t += kTileTokens) {
            const int nt = t1 - t < kTileTokens ? static_cast<int>(t1 - t) : kTileTokens;
            TileJob j{panel, n8, {}, begin, end, m.nCols, nullptr, nullptr, m.yStride};
            for (int k = 0; k < nt; ++k) j.x[k] = x + (t + k) * n8;
            j.acc = acc + (t - t0) / kTileTokens * kPairs * kTileTokens;
            j.y = m.y + t * m.yStride + row0;
            if (t0 == 0) prefetch.beforeTile(tileIndex++);
            runTile(nt, j);
        }
    }
}

}  // namespace

// Same scratch as gemmPanelFloat (gemmPanelBytesFloat): the panel, 64-byte aligned inside it,
// then the accumulators of a token chunk.
void gemmPanelFloatAvx512(const MatmulArgs& m, const void* actInfo, int64_t row0, void* scratch) {
    const int64_t n8 = paddedCols(m.nCols);
    auto* panel = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch) + 63) & ~uintptr_t{63});
    for (int r = 0; r < kPanelRows; ++r)
        rowToPairs(m.wType, static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0 + r) * m.weightRowBytes,
                   m.nCols, panel + (r / 2) * 2 * n8, r % 2);
    auto* acc = reinterpret_cast<__m512*>(panel + kPanelRows * n8);
    const auto* x = static_cast<const float*>(actInfo);
    for (int64_t t = 0; t < m.nTokens; t += kChunkTokens)
        tokenChunk(m, panel, x, row0, t, t + kChunkTokens < m.nTokens ? t + kChunkTokens : m.nTokens, acc);
}

}  // namespace hearth::avx2
