// AVX2 dot products and matmul rows of the float types (F32, F16 via F16C, BF16), bit for
// bit the reference's (quants.h): one ymm of eight float lanes per (row, token), element i in
// lane i % 8, lane = fma(w, a, lane), then ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
#include <cmath>

#include "kernels/cpu/avx2/float_lanes.h"
#include "kernels/cpu/avx2/kernels.h"

namespace hearth::avx2 {
namespace {

// Adds the tail (elements from `from` on, `from` a multiple of 8) and combines the lanes.
template <class L>
float finish(__m256 lanes, const typename L::T* w, const typename L::T* a, int64_t from, int64_t n) {
    if (from == n) return combineLanes(lanes);
    alignas(32) float l[8];
    _mm256_store_ps(l, lanes);
    for (int64_t i = from; i < n; ++i) l[i - from] = std::fmaf(L::one(w[i]), L::one(a[i]), l[i - from]);
    return combineLanes(_mm256_load_ps(l));
}

template <class L>
float dotRow(const typename L::T* w, const typename L::T* a, int64_t n) {
    __m256 lanes = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) lanes = _mm256_fmadd_ps(L::load8(w + i), L::load8(a + i), lanes);
    return finish<L>(lanes, w, a, i, n);
}

// Four rows against one token: four independent FMA chains hide the FMA latency (decode is
// bound by reading the weights, not by arithmetic), and the token is converted once.
template <class L>
void fourRows(const typename L::T* const* w, const typename L::T* a, int64_t n, float* out) {
    __m256 lanes[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 av = L::load8(a + i);
        for (int r = 0; r < 4; ++r) lanes[r] = _mm256_fmadd_ps(L::load8(w[r] + i), av, lanes[r]);
    }
    for (int r = 0; r < 4; ++r) out[r] = finish<L>(lanes[r], w[r], a, i, n);
}

template <class L>
void rows(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    using T = typename L::T;
    const auto row = [&](int64_t r) {
        return reinterpret_cast<const T*>(static_cast<const uint8_t*>(m.weights) +
                                          static_cast<size_t>(r) * m.weightRowBytes);
    };
    const auto token = [&](int64_t t) {
        return reinterpret_cast<const T*>(static_cast<const uint8_t*>(m.acts) + static_cast<size_t>(t) * m.actRowBytes);
    };
    int64_t r = rowBegin;
    for (; r + 4 <= rowEnd; r += 4) {  // the four rows stay in cache while every token passes
        const T* w[4] = {row(r), row(r + 1), row(r + 2), row(r + 3)};
        for (int64_t t = 0; t < m.nTokens; ++t) {
            float out[4];
            fourRows<L>(w, token(t), m.nCols, out);
            for (int k = 0; k < 4; ++k) m.y[t * m.yStride + r + k] = out[k];
        }
    }
    for (; r < rowEnd; ++r)
        for (int64_t t = 0; t < m.nTokens; ++t) m.y[t * m.yStride + r] = dotRow<L>(row(r), token(t), m.nCols);
}

}  // namespace

void matmulRowsFloat(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    switch (m.wType) {
    case DType::F32: return rows<F32Loader>(m, rowBegin, rowEnd);
    case DType::F16: return rows<F16Loader>(m, rowBegin, rowEnd);
    case DType::BF16: return rows<Bf16Loader>(m, rowBegin, rowEnd);
    default: return;
    }
}

float vecDotFloat(DType w, const void* weightRow, const void* actRow, int64_t n) {
    switch (w) {
    case DType::F32:
        return dotRow<F32Loader>(static_cast<const float*>(weightRow), static_cast<const float*>(actRow), n);
    case DType::F16:
        return dotRow<F16Loader>(static_cast<const f16_t*>(weightRow), static_cast<const f16_t*>(actRow), n);
    case DType::BF16:
        return dotRow<Bf16Loader>(static_cast<const bf16_t*>(weightRow), static_cast<const bf16_t*>(actRow), n);
    default: return 0.0f;
    }
}

}  // namespace hearth::avx2
