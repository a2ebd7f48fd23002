// Unpacking of K-quant super-blocks (Q4_K, Q5_K, Q6_K; layouts in GGUF.md) into 32-value
// chunks and integer scales, shared by the dot products and the prefill panels. Include ONLY
// from files built with -mavx2 -mfma -mf16c (internal linkage, as simd.h).
#pragma once

#include <cstring>

#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

// Per super-block and row: the sub-block scales (and mins) as int16, ready for madd.
struct KScales {
    alignas(32) int16_t scale[16];  // Q4_K/Q5_K: [8] per 32 values; Q6_K: [16] per 16 values
    __m128i mins;  // Q4_K/Q5_K: the 8 mins as int16
};

// Q4_K/Q5_K: eight 6-bit scales and mins in 12 bytes (GGUF.md), unpacked four at a time from
// little-endian words A = bytes 0-3, B = 4-7, C = 8-11: scales 0-3 are A's low 6 bits, mins
// 0-3 B's; scales 4-7 are C's low nibbles with A's top 2 bits above, mins 4-7 C's high
// nibbles with B's top 2 bits.
inline __m128i scalesMinsBytes(const uint8_t* s) {
    uint32_t a, b, c;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + 4, 4);
    std::memcpy(&c, s + 8, 4);
    const uint32_t scLow = a & 0x3f3f3f3fu, mLow = b & 0x3f3f3f3fu;
    const uint32_t scHigh = (c & 0x0f0f0f0fu) | (((a >> 6) & 0x03030303u) << 4);
    const uint32_t mHigh = ((c >> 4) & 0x0f0f0f0fu) | (((b >> 6) & 0x03030303u) << 4);
    return _mm_setr_epi32(static_cast<int>(scLow), static_cast<int>(scHigh), static_cast<int>(mLow),
                          static_cast<int>(mHigh));
}

// The 8 scales (low 128 bits) and the 8 mins (high 128 bits) as int16.
inline __m256i scalesMins16(const uint8_t* s) { return _mm256_cvtepu8_epi16(scalesMinsBytes(s)); }

inline void unpackScalesMins(const uint8_t* s, KScales& out) {
    const __m128i bytes = scalesMinsBytes(s);
    _mm_store_si128(reinterpret_cast<__m128i*>(out.scale), _mm_cvtepu8_epi16(bytes));
    out.mins = _mm_cvtepu8_epi16(_mm_unpackhi_epi64(bytes, bytes));
}

// Q6_K: the 16 signed 8-bit scales as int16.
inline __m256i scalesQ6(const BlockQ6_K& b) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)));
}

inline void unpackScalesQ6(const BlockQ6_K& b, KScales& out) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(out.scale), scalesQ6(b));
}

// Q4_K chunk j (32 values, 0..15): chunk j/2 of qs, low nibbles for even j, high for odd.
inline __m256i q4kChunk(const uint8_t* qs, int j) {
    const __m256i bytes = load256(qs + 32 * (j / 2));
    const __m256i shifted = (j & 1) ? _mm256_srli_epi16(bytes, 4) : bytes;
    return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0f));
}

// Q5_K chunk j (0..31): as Q4_K, plus bit j of qh[l] as the fifth bit of value l.
inline __m256i q5kChunk(const BlockQ5_K& b, int j) {
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(load256(b.qh), j), _mm256_set1_epi8(1));
    return _mm256_or_si256(q4kChunk(b.qs, j), _mm256_slli_epi16(high, 4));
}

// Q6_K chunk j (values 32j..32j+31 as u = value + 32, 0..63): half j/4, then ql and qh bits
// as GGUF.md lays out.
inline __m256i q6kChunk(const BlockQ6_K& b, int j) {
    const int half = j / 4, k = j % 4;
    const __m256i ql = load256(b.ql + 64 * half + 32 * (k & 1));
    const __m256i low = _mm256_and_si256(k < 2 ? ql : _mm256_srli_epi16(ql, 4), _mm256_set1_epi8(0x0f));
    const __m256i qh = _mm256_and_si256(_mm256_srli_epi16(load256(b.qh + 32 * half), 2 * k), _mm256_set1_epi8(3));
    return _mm256_or_si256(low, _mm256_slli_epi16(qh, 4));
}

}  // namespace
}  // namespace hearth::avx2
