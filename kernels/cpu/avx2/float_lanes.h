// The float types' eight-lane arithmetic shared by dot_float.cpp and gemm_float.cpp: loading
// eight F32/F16/BF16 values as floats (exact) and combining a lane vector as the reference
// does (quants.h). Include ONLY from files built with -mavx2 -mfma -mf16c (as simd.h).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/simd.h"
#include "kernels/dtype.h"

namespace hearth::avx2 {
namespace {

struct F32Loader {
    using T = float;
    static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
    static float one(float v) { return v; }
};
struct F16Loader {
    using T = f16_t;
    static __m256 load8(const f16_t* p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static float one(f16_t v) { return halfToFloat(v); }
};
struct Bf16Loader {  // a bfloat16 is the high half of a float
    using T = bf16_t;
    static __m256 load8(const bf16_t* p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static float one(bf16_t v) { return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(v) << 16))); }
};

// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)): the halves added give s = (l0+l4, l1+l5, l2+l6,
// l3+l7); s + (s2, s3) gives (even, odd); even + odd. Float addition commutes bitwise.
inline float combineLanes(__m256 lanes) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(lanes), _mm256_extractf128_ps(lanes, 1));
    const __m128 evenOdd = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(evenOdd, _mm_movehdup_ps(evenOdd)));
}

// The float gemm's geometry, one for its two builds (gemm_float.cpp, gemm_float_avx512.cpp),
// which share gemmPanelBytesFloat's scratch: rows padded to whole groups of 8 columns, tokens
// taken in chunks whose accumulators fit in L1 beside kChunkCols columns of the panel.
constexpr int64_t kChunkCols = 512;  // 8 panel rows of these columns: 16 KB
constexpr int64_t kChunkTokens = 48;  // a multiple of both builds' tile widths; activations 96 KB, in L2
inline int64_t paddedCols(int64_t nCols) { return (nCols + 7) / 8 * 8; }

// The next panel's weight rows (after rows row0..row0+kPanelRows), prefetched in nTiles equal
// slices, one before each tile of a panel's first token chunk (prefetchSlice, simd.h):
// packing the next panel would otherwise wait on memory for every line.
struct NextPanelPrefetch {
    uintptr_t next;
    size_t step;
    NextPanelPrefetch(const MatmulArgs& m, int64_t row0, int64_t nTiles)
        : next(reinterpret_cast<uintptr_t>(m.weights) + static_cast<size_t>(row0 + kPanelRows) * m.weightRowBytes),
          step((kPanelRows * m.weightRowBytes + static_cast<size_t>(nTiles) - 1) / static_cast<size_t>(nTiles)) {}
    void beforeTile(int64_t tile) const { prefetchSlice(next, step, tile); }
};

}  // namespace
}  // namespace hearth::avx2
