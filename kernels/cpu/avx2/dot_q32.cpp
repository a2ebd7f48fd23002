// The AVX2 policy of the 32-block matrix-vector tiles (dot_q32_tiles.h holds the algorithm):
// integer sums with maddubs/madd (simd.h). kernels.h's entry points; matmulRowsQ32 hands over
// to the AVX-VNNI build (dot_q32_vnni.cpp) when MatmulArgs::avxVnni asks for it.
#include "kernels/cpu/avx2/dot_q32_tiles.h"
#include "kernels/cpu/avx2/gemm_q32_vnni.h"

namespace hearth::avx2 {
namespace {

struct DotAvx2 {
    static __m256i u8(__m256i w, __m256i a) { return dotU8(w, a); }
    static __m256i s8(__m256i w, __m256i a) { return dotS8(w, a); }
    // Each int16 of the two maddubs together sums 4 products u·a, |.| <= 4·31·127: exact.
    static __m256i u8Pair(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi) {
        const __m256i prod = _mm256_add_epi16(_mm256_maddubs_epi16(lo, aLo), _mm256_maddubs_epi16(hi, aHi));
        return _mm256_madd_epi16(prod, _mm256_set1_epi16(1));
    }
    // Widened one half at a time: a pair of Q8_0 products reaches 2·128·127 (a -128 weight).
    static __m256i s8Pair(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi) {
        return _mm256_add_epi32(dotS8(lo, aLo), dotS8(hi, aHi));
    }
};

}  // namespace

void matmulRowsQ32(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    if (m.avxVnni) return m.vnniEvex ? matmulRowsQ32VnniEvex(m, rowBegin, rowEnd) : matmulRowsQ32Vnni(m, rowBegin, rowEnd);
    matmulRowsWith<DotAvx2>(m, rowBegin, rowEnd);
}

float vecDotQ32(DType w, const void* weightRow, const void* actRow, int64_t n) {
    return vecDotWith<DotAvx2>(w, weightRow, actRow, n);
}

}  // namespace hearth::avx2
