// Prefill products of the float weight types (F32, F16, BF16): a panel of 8 weight rows
// converted once to float, activations converted once per batch to float (both exact, padded
// with zeros to a multiple of 8), then register tiles of 4 rows × 3 tokens: 12 accumulator
// vectors, each weight vector loaded once for 3 FMAs, so the inner loop is bound by the FMA
// ports. Each (row, token) keeps its own vector of the reference's eight float lanes (element
// i in lane i % 8, one FMA per element, quants.h) and combines it as the reference does, so
// every value is bitwise the vecDot's however rows and tokens are tiled.
#include "kernels/cpu/avx2/float_lanes.h"
#include "kernels/cpu/avx2/kernels.h"

namespace hearth::avx2 {
namespace {

constexpr int kTileRows = 4;
constexpr int kTileTokens = 3;
constexpr size_t kAccBytes = kChunkTokens * kPanelRows * sizeof(__m256);  // 12 KB (kChunkTokens: float_lanes.h)

// One row of n elements of type L::T into n8 = paddedCols(n) floats, the padding zero.
template <class L>
void rowToFloat(const void* src, int64_t n, float* dst) {
    const auto* p = static_cast<const typename L::T*>(src);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, L::load8(p + i));
    for (; i < n; ++i) dst[i] = L::one(p[i]);
    for (; i < paddedCols(n); ++i) dst[i] = 0.0f;
}

void rowToFloat(DType t, const void* src, int64_t n, float* dst) {
    switch (t) {
    case DType::F16: return rowToFloat<F16Loader>(src, n, dst);
    case DType::BF16: return rowToFloat<Bf16Loader>(src, n, dst);
    default: return rowToFloat<F32Loader>(src, n, dst);
    }
}

// Lanes [0, nCols % 8) of the last, partial group of 8 take part; the others must stay as
// they are (a zero product would turn a -0 lane into +0), hence a blend rather than padding.
__m256 tailMask(int64_t nCols) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(nCols % 8)), lane));
}

// One tile's share of the work: kTileRows panel rows (w, row stride n8) × NT tokens (x[t],
// padded floats), columns [begin, end). Its accumulators start at zero (begin == 0) or come
// from acc, and go back to acc, or are combined into y once the row is done (end == nCols).
struct TileJob {
    const float* w;
    int64_t n8;
    const float* x[kTileTokens];
    int64_t begin, end, nCols;
    __m256* acc;  // [kTileRows][NT]
    float* y;  // y[t * yStride + r]
    int64_t yStride;
};

template <int NT>
void tile(const TileJob& j) {
    __m256 acc[kTileRows][NT];
    for (int r = 0; r < kTileRows; ++r)
        for (int t = 0; t < NT; ++t) acc[r][t] = j.begin == 0 ? _mm256_setzero_ps() : j.acc[r * NT + t];
    const int64_t fullEnd = j.end < j.nCols / 8 * 8 ? j.end : j.nCols / 8 * 8;
    for (int64_t i = j.begin; i < fullEnd; i += 8) {
        __m256 a[NT];
        for (int t = 0; t < NT; ++t) a[t] = _mm256_loadu_ps(j.x[t] + i);
        for (int r = 0; r < kTileRows; ++r) {
            const __m256 wv = _mm256_load_ps(j.w + r * j.n8 + i);
            for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_fmadd_ps(wv, a[t], acc[r][t]);
        }
    }
    if (fullEnd < j.end) {  // the last, partial group of 8 columns
        const __m256 mask = tailMask(j.nCols);
        for (int r = 0; r < kTileRows; ++r) {
            const __m256 wv = _mm256_load_ps(j.w + r * j.n8 + fullEnd);
            for (int t = 0; t < NT; ++t) {
                const __m256 sum = _mm256_fmadd_ps(wv, _mm256_loadu_ps(j.x[t] + fullEnd), acc[r][t]);
                acc[r][t] = _mm256_blendv_ps(acc[r][t], sum, mask);
            }
        }
    }
    for (int r = 0; r < kTileRows; ++r)
        for (int t = 0; t < NT; ++t) {
            if (j.end == j.nCols) j.y[t * j.yStride + r] = combineLanes(acc[r][t]);
            else j.acc[r * NT + t] = acc[r][t];
        }
}

void runTile(int nt, const TileJob& j) {
    if (nt == 3) tile<3>(j);
    else if (nt == 2) tile<2>(j);
    else tile<1>(j);
}

// Tokens [t0, t1) (at most kChunkTokens) through the panel, kChunkCols columns at a time.
// The first chunk also prefetches the next panel's weight rows (NextPanelPrefetch).
void tokenChunk(const MatmulArgs& m, const float* panel, const float* x, int64_t row0, int64_t t0, int64_t t1,
                __m256* acc) {
    const int64_t n8 = paddedCols(m.nCols);
    const NextPanelPrefetch prefetch(m, row0,
                                     (m.nCols + kChunkCols - 1) / kChunkCols *
                                         ((t1 - t0 + kTileTokens - 1) / kTileTokens) * (kPanelRows / kTileRows));
    int64_t tileIndex = 0;
    for (int64_t begin = 0; begin < m.nCols; begin += kChunkCols) {
        const int64_t end = begin + kChunkCols < m.nCols ? begin + kChunkCols : m.nCols;
        for (int64_t t = t0; t < t1; t += kTileTokens) {
            const int nt = t1 - t < kTileTokens ? static_cast<int>(t1 - t) : kTileTokens;
            TileJob j{nullptr, n8, {}, begin, end, m.nCols, nullptr, nullptr, m.yStride};
            for (int k = 0; k < nt; ++k) j.x[k] = x + (t + k) * n8;
            for (int pr = 0; pr < kPanelRows; pr += kTileRows) {
                j.w = panel + pr * n8;
                j.acc = acc +
                    ((t - t0) / kTileTokens * (kPanelRows / kTileRows) + pr / kTileRows) * kTileRows * kTileTokens;
                j.y = m.y + t * m.yStride + row0 + pr;
                if (t0 == 0) prefetch.beforeTile(tileIndex++);
                runTile(nt, j);
            }
        }
    }
}

}  // namespace

// The panel ([kPanelRows][paddedCols] floats), then the accumulators of a token chunk; 64
// bytes more so that the AVX-512 build can align its panel to ZMM loads.
size_t gemmPanelBytesFloat(int64_t nCols) {
    return static_cast<size_t>(kPanelRows * paddedCols(nCols)) * sizeof(float) + kAccBytes + 64;
}

size_t gemmActInfoBytesFloat(int64_t nCols) { return static_cast<size_t>(paddedCols(nCols)) * sizeof(float); }

void gemmActInfoFloat(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    const int64_t n8 = paddedCols(m.nCols);
    for (int64_t t = tokenBegin; t < tokenEnd; ++t)
        rowToFloat(m.wType, static_cast<const uint8_t*>(m.acts) + static_cast<size_t>(t) * m.actRowBytes, m.nCols,
                   static_cast<float*>(info) + t * n8);
}

// Tokens in chunks whose accumulators fit in L1 next to kChunkCols columns of the panel, so
// that the FMAs read the weights and the activations from L1 (rows of thousands of columns
// would otherwise stream both from L2 for every tile). Stopping and resuming an accumulator
// changes nothing in its lanes' order.
void gemmPanelFloat(const MatmulArgs& m, const void* actInfo, int64_t row0, void* scratch) {
    if (m.avx512) return gemmPanelFloatAvx512(m, actInfo, row0, scratch);
    const int64_t n8 = paddedCols(m.nCols);
    auto* panel = static_cast<float*>(scratch);
    for (int r = 0; r < kPanelRows; ++r)
        rowToFloat(m.wType, static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0 + r) * m.weightRowBytes,
                   m.nCols, panel + r * n8);
    auto* acc = reinterpret_cast<__m256*>(panel + kPanelRows * n8);
    const auto* x = static_cast<const float*>(actInfo);
    for (int64_t t = 0; t < m.nTokens; t += kChunkTokens)
        tokenChunk(m, panel, x, row0, t, t + kChunkTokens < m.nTokens ? t + kChunkTokens : m.nTokens, acc);
}

}  // namespace hearth::avx2
