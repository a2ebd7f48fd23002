// AVX2 activation quantizers (Q8_0, Q8_1, Q8_K, F16, BF16), bit for bit the reference's
// (quants.h: roundf for Q8_0/Q8_1, nearest-even for Q8_K, NaN -> 0, saturation to int8).
#include <cstring>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

inline __m256 absPs(__m256 v) { return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }

// max_ps returns its second operand when the first is NaN, so a NaN element is skipped as the
// reference's std::max(amax, fabs(x)) skips it.
inline float maxAbs(const float* x, int n) {
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 8) m = _mm256_max_ps(absPs(_mm256_loadu_ps(x + i)), m);
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

// roundf (half away from zero), exactly: truncate, then step away from zero when the dropped
// fraction (exact: v - trunc(v) needs no rounding) is at least one half.
inline __m256 roundHalfAway(__m256 v) {
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 big = _mm256_cmp_ps(absPs(_mm256_sub_ps(v, t)), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    const __m256 signedOne = _mm256_or_ps(_mm256_and_ps(v, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(1.0f));
    return _mm256_add_ps(t, _mm256_and_ps(big, signedOne));
}

// The reference's toInt8Saturated on integral floats: NaN -> 0, clamp to [-128, 127].
inline __m256i toInt32Saturated(__m256 r) {
    r = _mm256_and_ps(r, _mm256_cmp_ps(r, r, _CMP_ORD_Q));
    r = _mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-128.0f)), _mm256_set1_ps(127.0f));
    return _mm256_cvttps_epi32(r);
}

// Four vectors of 8 int32 (each in [-128, 127]) -> 32 int8 in order.
inline void storeInt8x32(__m256i a, __m256i b, __m256i c, __m256i d, int8_t* out) {
    const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    // The packs interleave 128-bit lanes: 4-byte groups come out as a0 b0 c0 d0 a1 b1 c1 d1.
    const __m256i ordered = _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), ordered);
}

// One Q8_0/Q8_1 block; returns the f32 d and, through sum, Σq.
float quantizeBlock8(const float* x, int8_t* q, int* sum) {
    const float d = maxAbs(x, kQK) / 127.0f;
    const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
    __m256i v[4];
    for (int k = 0; k < 4; ++k) v[k] = toInt32Saturated(roundHalfAway(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), id)));
    storeInt8x32(v[0], v[1], v[2], v[3], q);
    *sum = hsumInt32(_mm256_add_epi32(_mm256_add_epi32(v[0], v[1]), _mm256_add_epi32(v[2], v[3])));
    return d;
}

inline f16_t toHalf(float f) { return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }

void quantizeQ8_0(const float* x, BlockQ8_0* y, int64_t nBlocks) {
    int sum;
    for (int64_t i = 0; i < nBlocks; ++i, x += kQK) y[i].d = toHalf(quantizeBlock8(x, y[i].qs, &sum));
}

void quantizeQ8_1(const float* x, BlockQ8_1* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i, x += kQK) {
        int sum;
        const float d = quantizeBlock8(x, y[i].qs, &sum);
        y[i].d = toHalf(d);
        y[i].s = toHalf(static_cast<float>(sum) * d);
    }
}

// The signed element of largest magnitude; the first one on ties, as the reference's scan.
float signedMax(const float* x, float amax) {
    const __m256 target = _mm256_set1_ps(amax);
    for (int i = 0; i < kQKK; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const int hits = _mm256_movemask_ps(_mm256_cmp_ps(absPs(v), target, _CMP_EQ_OQ));
        if (hits != 0) return x[i + __builtin_ctz(static_cast<unsigned>(hits))];
    }
    return 0.0f;  // unreachable: amax is one of the |x|
}

void quantizeQ8_KBlock(const float* x, BlockQ8_K& y) {
    std::memset(&y, 0, sizeof y);
    const float amax = maxAbs(x, kQKK);
    if (amax == 0.0f) return;
    const float iscale = -127.0f / signedMax(x, amax);
    const __m256 scale = _mm256_set1_ps(iscale);
    __m256i halves[16];  // per 16-value group (a bsum): 8 partial sums
    for (int c = 0; c < kQKK / 32; ++c) {
        __m256i v[4];
        for (int k = 0; k < 4; ++k) {
            const __m256 p = _mm256_mul_ps(_mm256_loadu_ps(x + 32 * c + 8 * k), scale);
            v[k] = toInt32Saturated(_mm256_round_ps(p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        }
        storeInt8x32(v[0], v[1], v[2], v[3], y.qs + 32 * c);
        halves[2 * c] = _mm256_add_epi32(v[0], v[1]);
        halves[2 * c + 1] = _mm256_add_epi32(v[2], v[3]);
    }
    for (int h = 0; h < 2; ++h) {
        const __m256i sums = hsumInt32x8(halves + 8 * h);  // bsums 8h .. 8h+7 as int32
        const __m128i packed = _mm_packs_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y.bsums + 8 * h), packed);
    }
    y.d = 1.0f / iscale;
}

void quantizeF16(const float* x, f16_t* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) y[i] = toHalf(x[i]);
}

// bfloat16 round to nearest even; a NaN keeps its top bits with the quiet bit forced.
inline __m256i toBf16Bits(__m256i x) {
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    const __m256i nanBits = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    const __m256i magnitude = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
    const __m256i isNan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_epi8(rounded, nanBits, isNan);
}

void quantizeBf16(const float* x, bf16_t* y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i a = toBf16Bits(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
        const __m256i b = toBf16Bits(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + 8)));
        // packus keeps 0..65535; it interleaves lanes, so restore the order of 64-bit groups.
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), _MM_SHUFFLE(3, 1, 2, 0));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), packed);
    }
    for (; i < n; ++i) {
        uint32_t bits;
        std::memcpy(&bits, x + i, sizeof bits);
        y[i] = static_cast<bf16_t>(_mm256_cvtsi256_si32(toBf16Bits(_mm256_set1_epi32(static_cast<int>(bits)))));
    }
}

}  // namespace

void quantizeRow(DType t, const float* src, void* dst, int64_t n) {
    switch (t) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: return quantizeF16(src, static_cast<f16_t*>(dst), n);
    case DType::BF16: return quantizeBf16(src, static_cast<bf16_t*>(dst), n);
    case DType::Q8_0: return quantizeQ8_0(src, static_cast<BlockQ8_0*>(dst), n / kQK);
    case DType::Q8_1: return quantizeQ8_1(src, static_cast<BlockQ8_1*>(dst), n / kQK);
    case DType::Q8_K:
        for (int64_t i = 0; i < n / kQKK; ++i) quantizeQ8_KBlock(src + i * kQKK, static_cast<BlockQ8_K*>(dst)[i]);
        return;
    default: return;  // weight formats are produced by converters, not by the engine
    }
}

}  // namespace hearth::avx2
