// AVX2 dot products and matmul rows of the float types (F32, F16 via F16C, BF16), bit for
// bit the reference's: products in double (exact), eight double lanes with element i in lane
// i % 8, lanes combined as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)). Since every product is
// exact, a fused multiply-add rounds exactly as the reference's multiply-then-add.
#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

struct F32Loader {
    using T = float;
    static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
    static double one(float v) { return v; }
};
struct F16Loader {
    using T = f16_t;
    static __m256 load8(const f16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    static double one(f16_t v) { return halfToFloat(v); }
};
struct Bf16Loader {
    using T = bf16_t;
    static __m256 load8(const bf16_t* p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static double one(bf16_t v) {
        const __m128i bits = _mm_cvtsi32_si128(static_cast<int>(v) << 16);
        return _mm_cvtss_f32(_mm_castsi128_ps(bits));
    }
};

// Lanes 0-3 and 4-7 of the reference's eight double lanes.
struct Lanes {
    __m256d low = _mm256_setzero_pd(), high = _mm256_setzero_pd();
    void add(__m256 w, __m256 a) {
        low = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(w)), _mm256_cvtps_pd(_mm256_castps256_ps128(a)), low);
        high = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(w, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)), high);
    }
};

// Adds the tail (elements from `from` on, `from` a multiple of 8) and combines the lanes.
template <class L>
float finish(const Lanes& lanes, const typename L::T* w, const typename L::T* a, int64_t from, int64_t n) {
    alignas(32) double l[8];
    _mm256_store_pd(l, lanes.low);
    _mm256_store_pd(l + 4, lanes.high);
    for (int64_t i = from; i < n; ++i) l[i - from] = l[i - from] + L::one(w[i]) * L::one(a[i]);
    const double even = (l[0] + l[4]) + (l[2] + l[6]);
    const double odd = (l[1] + l[5]) + (l[3] + l[7]);
    return static_cast<float>(even + odd);
}

template <class L>
float dotRow(const typename L::T* w, const typename L::T* a, int64_t n) {
    Lanes lanes;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) lanes.add(L::load8(w + i), L::load8(a + i));
    return finish<L>(lanes, w, a, i, n);
}

// Four rows against one token: four independent accumulator pairs hide the FMA latency, and
// the token's values are converted once for the four rows.
template <class L>
void fourRows(const typename L::T* const* w, const typename L::T* a, int64_t n, float* out) {
    Lanes lanes[4];
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 av = L::load8(a + i);
        for (int r = 0; r < 4; ++r) lanes[r].add(L::load8(w[r] + i), av);
    }
    for (int r = 0; r < 4; ++r) out[r] = finish<L>(lanes[r], w[r], a, i, n);
}

template <class L>
void rows(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    using T = typename L::T;
    const auto row = [&](int64_t r) {
        return reinterpret_cast<const T*>(static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(r) * m.weightRowBytes);
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
    case DType::F32: return dotRow<F32Loader>(static_cast<const float*>(weightRow), static_cast<const float*>(actRow), n);
    case DType::F16: return dotRow<F16Loader>(static_cast<const f16_t*>(weightRow), static_cast<const f16_t*>(actRow), n);
    case DType::BF16: return dotRow<Bf16Loader>(static_cast<const bf16_t*>(weightRow), static_cast<const bf16_t*>(actRow), n);
    default: return 0.0f;
    }
}

}  // namespace hearth::avx2
