// Prefill products of the float weight types (F32, F16, BF16): a panel of 8 rows converted
// once to double (exact), activations converted once per batch to float (exact), then tiles of
// 2 rows × 3 tokens whose FMAs take the weights straight from the panel. Each (row, token)
// keeps the reference's eight double lanes (element i in lane i % 8, quants.h) and combines
// them as it does; every product is exact, so each value is bitwise the vecDot's.
#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

constexpr int kTileRows = 2;

// Element i of a weight or activation row of type t, as a float (exact for all three types).
inline float elementAsFloat(DType t, const void* row, int64_t i) {
    switch (t) {
    case DType::F16: return halfToFloat(static_cast<const f16_t*>(row)[i]);
    case DType::BF16: {
        const uint32_t bits = static_cast<uint32_t>(static_cast<const bf16_t*>(row)[i]) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
    default: return static_cast<const float*>(row)[i];
    }
}

// panel: [kPanelRows][nCols] doubles.
void packPanel(const MatmulArgs& m, int64_t row0, double* panel) {
    for (int r = 0; r < kPanelRows; ++r) {
        const void* row = static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0 + r) * m.weightRowBytes;
        for (int64_t i = 0; i < m.nCols; ++i) panel[r * m.nCols + i] = elementAsFloat(m.wType, row, i);
    }
}

inline float combine(__m256d low, __m256d high) {
    alignas(32) double l[8];
    _mm256_store_pd(l, low);
    _mm256_store_pd(l + 4, high);
    const double even = (l[0] + l[4]) + (l[2] + l[6]);
    const double odd = (l[1] + l[5]) + (l[3] + l[7]);
    return static_cast<float>(even + odd);
}

// kTileRows rows (from panel row pr) × NT tokens (float rows x[t]).
template <int NT>
void tile(const MatmulArgs& m, const double* panel, int pr, const float* const* x, int64_t row0, int64_t token0) {
    __m256d low[kTileRows][NT], high[kTileRows][NT];
    for (int r = 0; r < kTileRows; ++r)
        for (int t = 0; t < NT; ++t) low[r][t] = high[r][t] = _mm256_setzero_pd();
    const double* w0 = panel + pr * m.nCols;
    const double* w1 = w0 + m.nCols;
    for (int64_t i = 0; i < m.nCols; i += 8) {
        for (int t = 0; t < NT; ++t) {
            const __m256d aLow = _mm256_cvtps_pd(_mm_loadu_ps(x[t] + i));
            const __m256d aHigh = _mm256_cvtps_pd(_mm_loadu_ps(x[t] + i + 4));
            low[0][t] = _mm256_fmadd_pd(_mm256_loadu_pd(w0 + i), aLow, low[0][t]);
            high[0][t] = _mm256_fmadd_pd(_mm256_loadu_pd(w0 + i + 4), aHigh, high[0][t]);
            low[1][t] = _mm256_fmadd_pd(_mm256_loadu_pd(w1 + i), aLow, low[1][t]);
            high[1][t] = _mm256_fmadd_pd(_mm256_loadu_pd(w1 + i + 4), aHigh, high[1][t]);
        }
    }
    for (int r = 0; r < kTileRows; ++r)
        for (int t = 0; t < NT; ++t) m.y[(token0 + t) * m.yStride + row0 + pr + r] = combine(low[r][t], high[r][t]);
}

}  // namespace

// Only rows whose length is a multiple of 8 (no tail); others take matmulRows.
size_t gemmPanelBytesFloat(int64_t nCols) {
    return nCols % 8 == 0 ? static_cast<size_t>(kPanelRows * nCols) * sizeof(double) : 0;
}

size_t gemmActInfoBytesFloat(int64_t nCols) { return static_cast<size_t>(nCols) * sizeof(float); }

void gemmActInfoFloat(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    auto* out = static_cast<float*>(info);
    for (int64_t t = tokenBegin; t < tokenEnd; ++t) {
        const void* row = static_cast<const uint8_t*>(m.acts) + static_cast<size_t>(t) * m.actRowBytes;
        for (int64_t i = 0; i < m.nCols; ++i) out[t * m.nCols + i] = elementAsFloat(m.wType, row, i);
    }
}

void gemmPanelFloat(const MatmulArgs& m, const void* actInfo, int64_t row0, void* scratch) {
    auto* panel = static_cast<double*>(scratch);
    packPanel(m, row0, panel);
    const auto* x = static_cast<const float*>(actInfo);
    const auto rowsOf = [&](int64_t t0, int n, const float** out) {
        for (int t = 0; t < n; ++t) out[t] = x + (t0 + t) * m.nCols;
    };
    for (int pr = 0; pr < kPanelRows; pr += kTileRows) {
        int64_t t = 0;
        const float* rows[3];
        for (; t + 3 <= m.nTokens; t += 3) {
            rowsOf(t, 3, rows);
            tile<3>(m, panel, pr, rows, row0, t);
        }
        rowsOf(t, static_cast<int>(m.nTokens - t), rows);
        if (m.nTokens - t == 2) tile<2>(m, panel, pr, rows, row0, t);
        if (m.nTokens - t == 1) tile<1>(m, panel, pr, rows, row0, t);
    }
}

}  // namespace hearth::avx2
