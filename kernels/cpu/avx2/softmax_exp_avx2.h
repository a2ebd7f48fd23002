// softmaxExp (reference/softmax_exp.h) on eight lanes: each lane performs the reference's
// operations in its order, so the bits are equal. Only for sources compiled with -mavx2 -mfma;
// internal linkage (static), so no baseline caller can be linked to this copy.
#pragma once

#include <immintrin.h>

#include "kernels/cpu/reference/softmax_exp.h"

namespace hearth::avx2 {

static inline __m256 softmaxExp8(__m256 x) {
    using namespace softmax_exp;
    const __m256 inRange = _mm256_cmp_ps(x, _mm256_set1_ps(kMin), _CMP_GE_OQ);  // false for NaN
    const __m256 magic = _mm256_set1_ps(kRoundMagic);
    const __m256 n = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), magic), magic);
    __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Hi), x);
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Lo), r);
    __m256 y = _mm256_set1_ps(kP0);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP1));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP2));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP3));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP4));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP5));
    y = _mm256_add_ps(_mm256_fmadd_ps(y, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    // 2^n from the exponent bits; lanes out of range get a harmless exponent and are zeroed.
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_and_ps(n, inRange)), _mm256_set1_epi32(127));
    const __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
    return _mm256_and_ps(_mm256_mul_ps(y, scale), inRange);
}

}  // namespace hearth::avx2
