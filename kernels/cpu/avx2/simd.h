// Small AVX2 helpers shared by the AVX2 kernel sources. Include ONLY from files built with
// -mavx2 -mfma -mf16c. Everything here has internal linkage (an anonymous namespace), so that
// no AVX2-compiled copy of an inline function can be picked by the linker for baseline code.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/dtype.h"

namespace hearth::avx2 {
namespace {

// Exact: F16C converts every half, subnormals included, as ref f16ToF32 does (only a
// signalling NaN differs: F16C sets its quiet bit).
inline float halfToFloat(f16_t h) { return _cvtsh_ss(h); }

// Sum of the 8 int32 lanes (exact while it fits in int32, as every block sum here does).
inline int hsumInt32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// [x0+x1, y0+y1, x2+x3, y2+y3, ...]: a horizontal add of pairs with shifts and a blend
// instead of hadd's two shuffles, since the shuffle port is the bottleneck of the tiles.
inline __m256i pairSums(__m256i x, __m256i y) {
    const __m256i xs = _mm256_add_epi32(x, _mm256_srli_epi64(x, 32));
    const __m256i ys = _mm256_add_epi32(y, _mm256_slli_epi64(y, 32));
    return _mm256_blend_epi32(xs, ys, 0xaa);
}

// Lane i of the result = the sum of the 8 lanes of v[i]: eight block sums side by side.
inline __m256i hsumInt32x8(const __m256i* v) {
    // a_k = [v2k, v2k+1 pair sums], 4 partials each: lanes (0,1) = 64-bit group 0, (2,3) = 1, ...
    const __m256i a0 = pairSums(v[0], v[1]), a1 = pairSums(v[2], v[3]);
    const __m256i a2 = pairSums(v[4], v[5]), a3 = pairSums(v[6], v[7]);
    // Sum 64-bit groups 0+1 and 2+3 of each 128-bit lane: b0 = [v0 v1 v2 v3 | v0 v1 v2 v3].
    const __m256i b0 = _mm256_add_epi32(_mm256_unpacklo_epi64(a0, a1), _mm256_unpackhi_epi64(a0, a1));
    const __m256i b1 = _mm256_add_epi32(_mm256_unpacklo_epi64(a2, a3), _mm256_unpackhi_epi64(a2, a3));
    return _mm256_add_epi32(_mm256_permute2x128_si256(b0, b1, 0x20), _mm256_permute2x128_si256(b0, b1, 0x31));
}

// Lane i of the result = the sum of the 4 lanes of v[i]: eight 128-bit vectors.
inline __m256i hsumInt32x4x8(const __m128i* v) {
    const __m128i a0 = _mm_hadd_epi32(v[0], v[1]), a1 = _mm_hadd_epi32(v[2], v[3]);
    const __m128i a2 = _mm_hadd_epi32(v[4], v[5]), a3 = _mm_hadd_epi32(v[6], v[7]);
    return _mm256_set_m128i(_mm_hadd_epi32(a2, a3), _mm_hadd_epi32(a0, a1));
}

// Σ over pairs of s8·s8 products of 32 signed bytes, as 8 int32 partial sums. Exact when no
// element of `a` is -128 (activations quantized by Q8_0/Q8_K never are: |q| <= 127), since
// then |sign(a, w)| <= 127 and each maddubs pair is at most 2·128·127 < 32767.
inline __m256i dotS8(__m256i w, __m256i a) {
    const __m256i prod = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
    return _mm256_madd_epi16(prod, _mm256_set1_epi16(1));
}

// Σ u8·s8 for weights in [0, 31] (Q4_1, Q5_1): pairs at most 2·31·128, no saturation.
inline __m256i dotU8(__m256i w, __m256i a) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), _mm256_set1_epi16(1));
}

// 16 bytes of packed nibbles -> 32 bytes: element j = low nibble of qs[j], element j + 16 =
// its high nibble (the order of Q4_0/Q4_1/Q5_x blocks). A 128-bit broadcast load and a
// per-lane variable shift keep this off the shuffle port, which the block sums need.
inline __m256i unpackNibbles32(const uint8_t* qs) {
    const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
    const __m256i shifted = _mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4));
    return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0f));
}

// Q5_x: byte j = 0x10 when bit j of the little-endian u32 qh is set, else 0.
inline __m256i fifthBits32(const uint8_t* qhBytes) {
    uint32_t qh;
    std::memcpy(&qh, qhBytes, sizeof qh);
    // Byte j takes byte j/8 of qh, then tests bit j%8 of it.
    const __m256i spread =
        _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)),
                            _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
    const __m256i isSet = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(isSet, _mm256_set1_epi8(0x10));
}

// Decode tiles read NR rows side by side, a few hundred bytes apart: a pattern the hardware
// prefetchers follow poorly. A tile over a span of rows (nBlocks blocks per row) calls this at
// each block b with step = ceil(span / nBlocks): it asks for slice b of the span that starts
// at `next` (the rows of a later tile), so that the tile reading them finds its lines in cache.
// A prefetch never faults, so `next` may lie past the matrix (an integer address: no pointer
// arithmetic outside the matrix).
inline void prefetchSlice(uintptr_t next, size_t step, int64_t b) {
    const size_t begin = step * static_cast<size_t>(b);
    for (size_t off = begin & ~size_t{63}; off < begin + step; off += 64)
        _mm_prefetch(reinterpret_cast<const char*>(next + off), _MM_HINT_T0);
}

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Eight halves from eight addresses (one field of eight blocks), as floats.
inline __m256 gatherHalves(const f16_t* const* p) {
    return _mm256_cvtph_ps(_mm_set_epi16(
        static_cast<short>(*p[7]), static_cast<short>(*p[6]), static_cast<short>(*p[5]), static_cast<short>(*p[4]),
        static_cast<short>(*p[3]), static_cast<short>(*p[2]), static_cast<short>(*p[1]), static_cast<short>(*p[0])));
}

// 8x8 transpose of 32-bit elements: afterwards v[k] lane r = what was v[r] lane k.
inline void transpose8x8Epi32(__m256i* v) {
    __m256i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {  // u[i + c]: column c | column c + 4 of rows i..i+3
        u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int c = 0; c < 4; ++c) {
        v[c] = _mm256_permute2x128_si256(u[c], u[c + 4], 0x20);
        v[c + 4] = _mm256_permute2x128_si256(u[c], u[c + 4], 0x31);
    }
}

}  // namespace
}  // namespace hearth::avx2
