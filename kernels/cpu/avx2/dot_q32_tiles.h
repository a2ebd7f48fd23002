// The matrix-vector tiles of the 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) against
// Q8_0/Q8_1 activations, written once and compiled twice: dot_q32.cpp (AVX2: maddubs/madd) and
// dot_q32_vnni.cpp (AVX-VNNI: vpdpbusd) include it with their Dot policy, which provides
//   static __m256i u8(__m256i w, __m256i a);  // Σ of u8·s8 products, 4 per int32 lane
//   static __m256i s8(__m256i w, __m256i a);  // Σ of s8·s8 products, 4 per int32 lane
//   static __m256i u8Pair(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi);  // u8(lo, aLo) + u8(hi, aHi)
//   static __m256i s8Pair(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi);  // s8(lo, aLo) + s8(hi, aHi)
// (exact for |a| <= 127, w in [0, 31] for u8). Include ONLY from those two files.
//
// The integer block sums are exact; the float accumulation is the reference's, expression for
// expression (quants.h), done either one value at a time or eight (row, token) values side by
// side in the lanes of a vector. Built with -ffp-contract=off: an FMA would change the bits.
#pragma once

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

// Each type, for a Dot policy: its weight values as 32 bytes, the exact integer sum against
// one activation block, and the float term the reference adds to its accumulator per block, as one scalar
// and as eight lanes. Every block type here starts with its f16 d (then, for Q4_1/Q5_1, its
// f16 m), so the 32-bit word at a block's start holds d in its low and m in its high half.

// Types whose value is d·q (q signed): acc + ((dw*da) * isum). Q4_0 and Q5_0 store q + kOffset
// (8, 16) as an unsigned u: their weights() give u, dot() the sums of u·a (maddubs takes u as it
// is: no sign fix-ups), and isum = Σu·a - kOffset·Σa, exact integer arithmetic.
template <class WBlock, class Dot>
struct ScaleOnly {
    using W = WBlock;
    using A = BlockQ8_0;
    using Ops = Dot;
    static constexpr int kOffset = 0;
    static __m256i dot(__m256i w, const BlockQ8_0& a) { return Dot::s8(w, load256(a.qs)); }
    static __m256i pairDot(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi) { return Dot::s8Pair(lo, hi, aLo, aHi); }
    static float actSum(const BlockQ8_0&) { return 0.0f; }
    static float term(const WBlock& w, const BlockQ8_0& a, int isum) {
        return (halfToFloat(w.d) * halfToFloat(a.d)) * static_cast<float>(isum);
    }
    static __m256 terms(__m256 dw, __m256, __m256 da, __m256, __m256i isum) {
        return _mm256_mul_ps(_mm256_mul_ps(dw, da), _mm256_cvtepi32_ps(isum));
    }
};

// Types whose value is d·q + m (q unsigned): acc + ((dw*da) * isum + mw*sa).
template <class WBlock, class Dot>
struct ScaleMin {
    using W = WBlock;
    using A = BlockQ8_1;
    using Ops = Dot;
    static constexpr int kOffset = 0;
    static __m256i dot(__m256i w, const BlockQ8_1& a) { return Dot::u8(w, load256(a.qs)); }
    static __m256i pairDot(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi) { return Dot::u8Pair(lo, hi, aLo, aHi); }
    static float actSum(const BlockQ8_1& a) { return halfToFloat(a.s); }
    static float term(const WBlock& w, const BlockQ8_1& a, int isum) {
        return (halfToFloat(w.d) * halfToFloat(a.d)) * static_cast<float>(isum) + halfToFloat(w.m) * halfToFloat(a.s);
    }
    static __m256 terms(__m256 dw, __m256 mw, __m256 da, __m256 sa, __m256i isum) {
        const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(dw, da), _mm256_cvtepi32_ps(isum));
        return _mm256_add_ps(scaled, _mm256_mul_ps(mw, sa));
    }
};

// Two rows' blocks side by side for the pair tiles (pairTile): lo = [values 0-15 of row a |
// values 0-15 of row b], hi = the same for values 16-31, so that one activation half
// broadcast to both 128-bit lanes meets both rows.
inline __m256i twoHalves(const uint8_t* a, const uint8_t* b) {
    return _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b)),
                            _mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
}
inline void pairNibbles(const uint8_t* qsA, const uint8_t* qsB, __m256i& lo, __m256i& hi) {
    const __m256i both = twoHalves(qsA, qsB);
    const __m256i mask = _mm256_set1_epi8(0x0f);
    lo = _mm256_and_si256(both, mask);
    hi = _mm256_and_si256(_mm256_srli_epi16(both, 4), mask);
}
// Q5_x fifth bits of two rows (0x10 where bit j of qh is set) in pairNibbles' layout: byte j
// of lo's lane takes bit j % 8 of qh byte j / 8 (values 0-15), hi's bytes 2 and 3 (16-31).
inline void pairFifthBits(const uint8_t* qhA, const uint8_t* qhB, __m256i& lo, __m256i& hi) {
    uint32_t a, b;
    std::memcpy(&a, qhA, 4);
    std::memcpy(&b, qhB, 4);
    const __m256i words =
        _mm256_blend_epi32(_mm256_set1_epi32(static_cast<int>(a)), _mm256_set1_epi32(static_cast<int>(b)), 0xf0);
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
    const __m256i spreadLo =
        _mm256_shuffle_epi8(words, _mm256_set_epi64x(0x0101010101010101, 0, 0x0101010101010101, 0));
    const __m256i spreadHi = _mm256_shuffle_epi8(
        words, _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0303030303030303, 0x0202020202020202));
    const __m256i fifth = _mm256_set1_epi8(0x10);
    lo = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spreadLo, bit), bit), fifth);
    hi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spreadHi, bit), bit), fifth);
}

template <class Dot>
struct TQ4_0 : ScaleOnly<BlockQ4_0, Dot> {
    static constexpr int kOffset = 8;
    static __m256i weights(const BlockQ4_0& b) { return unpackNibbles32(b.qs); }
    static __m256i dot(__m256i w, const BlockQ8_0& a) { return Dot::u8(w, load256(a.qs)); }
    static void pairWeights(const BlockQ4_0& a, const BlockQ4_0& b, __m256i& lo, __m256i& hi) {
        pairNibbles(a.qs, b.qs, lo, hi);
    }
    static __m256i pairDot(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi) { return Dot::u8Pair(lo, hi, aLo, aHi); }
};
template <class Dot>
struct TQ5_0 : ScaleOnly<BlockQ5_0, Dot> {
    static constexpr int kOffset = 16;
    static __m256i weights(const BlockQ5_0& b) { return _mm256_or_si256(unpackNibbles32(b.qs), fifthBits32(b.qh)); }
    static __m256i dot(__m256i w, const BlockQ8_0& a) { return Dot::u8(w, load256(a.qs)); }
    static void pairWeights(const BlockQ5_0& a, const BlockQ5_0& b, __m256i& lo, __m256i& hi) {
        __m256i fLo, fHi;
        pairNibbles(a.qs, b.qs, lo, hi);
        pairFifthBits(a.qh, b.qh, fLo, fHi);
        lo = _mm256_or_si256(lo, fLo);
        hi = _mm256_or_si256(hi, fHi);
    }
    static __m256i pairDot(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi) { return Dot::u8Pair(lo, hi, aLo, aHi); }
};

// kOffset·Σa of an activation block, the term that takes the offset off Σu·a.
template <class T>
int offsetSum(const typename T::A& a) {
    return T::kOffset * hsumInt32(T::Ops::u8(_mm256_set1_epi8(1), load256(a.qs)));
}
template <class Dot>
struct TQ8_0 : ScaleOnly<BlockQ8_0, Dot> {
    static __m256i weights(const BlockQ8_0& b) { return load256(b.qs); }
    static void pairWeights(const BlockQ8_0& a, const BlockQ8_0& b, __m256i& lo, __m256i& hi) {
        const auto* qa = reinterpret_cast<const uint8_t*>(a.qs);
        const auto* qb = reinterpret_cast<const uint8_t*>(b.qs);
        lo = twoHalves(qa, qb);
        hi = twoHalves(qa + 16, qb + 16);
    }
};
template <class Dot>
struct TQ4_1 : ScaleMin<BlockQ4_1, Dot> {
    static __m256i weights(const BlockQ4_1& b) { return unpackNibbles32(b.qs); }
    static void pairWeights(const BlockQ4_1& a, const BlockQ4_1& b, __m256i& lo, __m256i& hi) {
        pairNibbles(a.qs, b.qs, lo, hi);
    }
};
template <class Dot>
struct TQ5_1 : ScaleMin<BlockQ5_1, Dot> {
    static __m256i weights(const BlockQ5_1& b) { return _mm256_or_si256(unpackNibbles32(b.qs), fifthBits32(b.qh)); }
    static void pairWeights(const BlockQ5_1& a, const BlockQ5_1& b, __m256i& lo, __m256i& hi) {
        __m256i fLo, fHi;
        pairNibbles(a.qs, b.qs, lo, hi);
        pairFifthBits(a.qh, b.qh, fLo, fHi);
        lo = _mm256_or_si256(lo, fLo);
        hi = _mm256_or_si256(hi, fHi);
    }
};

// One (row, token) value: the reference's loop, block by block.
template <class T>
float dotRow(const typename T::W* w, const typename T::A* a, int64_t nBlocks) {
    float acc = 0.0f;
    for (int64_t i = 0; i < nBlocks; ++i) {
        int isum = hsumInt32(T::dot(T::weights(w[i]), a[i]));
        if constexpr (T::kOffset != 0) isum -= offsetSum<T>(a[i]);
        acc = acc + T::term(w[i], a[i], isum);
    }
    return acc;
}

// The first 32-bit word of each of NR blocks (d, m) -> the d and m of row r in lane r.
// words with lane r taken from x (r is a constant once the callers' loops are unrolled).
inline __m256i insertLane(__m256i words, __m256i x, int r) {
    switch (r) {
    case 0: return _mm256_blend_epi32(words, x, 1);
    case 1: return _mm256_blend_epi32(words, x, 2);
    case 2: return _mm256_blend_epi32(words, x, 4);
    case 3: return _mm256_blend_epi32(words, x, 8);
    case 4: return _mm256_blend_epi32(words, x, 16);
    case 5: return _mm256_blend_epi32(words, x, 32);
    case 6: return _mm256_blend_epi32(words, x, 64);
    default: return _mm256_blend_epi32(words, x, 128);
    }
}

template <int NR>
inline void blockScales(const void* const* blocks, __m256& d, __m256& m) {
    // Broadcast loads and blends rather than inserts: no shuffle-port work (see simd.h).
    __m256i words = _mm256_setzero_si256();
    for (int r = 0; r < NR; ++r) {
        int word;
        std::memcpy(&word, blocks[r], 4);
        words = insertLane(words, _mm256_set1_epi32(word), r);
    }
    // Per 128-bit lane: low halves (d) to bytes 0-7, high halves (m) to bytes 8-15; then
    // 64-bit groups reordered to [d0-3, d4-7 | m0-3, m4-7].
    const __m256i split = _mm256_shuffle_epi8(words,
                                              _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0,
                                                               1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15));
    const __m256i ordered = _mm256_permute4x64_epi64(split, _MM_SHUFFLE(3, 1, 2, 0));
    d = _mm256_cvtph_ps(_mm256_castsi256_si128(ordered));
    m = _mm256_cvtph_ps(_mm256_extracti128_si256(ordered, 1));
}

// Lane p = r·NT + t from per-row values in lanes r (NT = 1 or 2).
template <int NT>
inline __m256 byRow(__m256 v) {
    if constexpr (NT == 1) return v;
    else return _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
}

// Lane p = r·NT + t from per-token values x[t] (NT = 1 or 2).
template <int NT>
inline __m256 byToken(const float* x) {
    if constexpr (NT == 1) return _mm256_set1_ps(x[0]);
    else return _mm256_setr_ps(x[0], x[1], x[0], x[1], x[0], x[1], x[0], x[1]);
}

// Tiles prefetch the rows this many tiles ahead (prefetchSlice, simd.h): every pair tile,
// and the 4-row tiles of a row group's first tokens.
constexpr size_t kPrefetchTiles = 2;

// NR rows × NT tokens (NR·NT = 8, or NR = 4 and NT = 1; for 4+ tokens and the rows left
// over from the pair tiles), each (row, token) value in its own lane p = r·NT + t. A weight
// block is unpacked once for NT tokens; an activation block is read for NR rows. Lanes
// beyond NR·NT compute garbage and are not stored.
template <class T, int NR, int NT>
void tile(const MatmulArgs& m, int64_t row0, int64_t token0, int64_t nBlocks) {
    static_assert(NR * NT <= 8 && NT <= 2);
    using W = typename T::W;
    using A = typename T::A;
    const auto* wBase = static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0) * m.weightRowBytes;
    const auto* aBase = static_cast<const uint8_t*>(m.acts) + static_cast<size_t>(token0) * m.actRowBytes;
    const W* wRow[NR];
    const A* aRow[NT];
    for (int r = 0; r < NR; ++r) wRow[r] = reinterpret_cast<const W*>(wBase + r * m.weightRowBytes);
    for (int t = 0; t < NT; ++t) aRow[t] = reinterpret_cast<const A*>(aBase + t * m.actRowBytes);
    const size_t span = NR * m.weightRowBytes, step = (span + nBlocks - 1) / nBlocks;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        if (token0 == 0) prefetchSlice(reinterpret_cast<uintptr_t>(wBase) + kPrefetchTiles * span, step, b);
        __m256i part[8];
        const void* blocks[NR];
        for (int r = 0; r < NR; ++r) {
            const __m256i wq = T::weights(wRow[r][b]);
            for (int t = 0; t < NT; ++t) part[r * NT + t] = T::dot(wq, aRow[t][b]);
            blocks[r] = &wRow[r][b];
        }
        for (int p = NR * NT; p < 8; ++p) part[p] = part[0];
        __m256 dw, mw;
        blockScales<NR>(blocks, dw, mw);
        float da[NT], sa[NT];
        for (int t = 0; t < NT; ++t) da[t] = halfToFloat(aRow[t][b].d), sa[t] = T::actSum(aRow[t][b]);
        __m256i isum = hsumInt32x8(part);
        if constexpr (T::kOffset != 0) {  // lane r·NT + t less token t's offset term
            int off[NT];
            for (int t = 0; t < NT; ++t) off[t] = offsetSum<T>(aRow[t][b]);
            isum = _mm256_sub_epi32(isum,
                                    NT == 1 ? _mm256_set1_epi32(off[0])
                                            : _mm256_setr_epi32(off[0], off[NT - 1], off[0], off[NT - 1], off[0],
                                                                off[NT - 1], off[0], off[NT - 1]));
        }
        const __m256 terms = T::terms(byRow<NT>(dw), byRow<NT>(mw), byToken<NT>(da), byToken<NT>(sa), isum);
        acc = _mm256_add_ps(acc, terms);
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc);
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) m.y[(token0 + t) * m.yStride + row0 + r] = lanes[r * NT + t];
}

// Decode and small batches (1 to 3 tokens): 8 rows × NT tokens. Each weight block is
// unpacked once, as four pairs of rows (rows k and k + 4 in the two halves of a vector:
// pairWeights), and serves the NT tokens; a token's 128-bit activation halves are broadcast
// to both rows of a pair, so that each pair's integer sums come out in four int32 lanes per
// row and two rounds of hadd give row r's block sum in lane r, for 8 rows at once (no 8-way
// horizontal sum per value; for one token, about a quarter fewer instructions than
// tile<8, 1>). acc[t] lane r is value (row0 + r, token t), its own accumulator, terms added
// in block order: bitwise dotRow.
template <class T, int NT>
void pairTile(const MatmulArgs& m, int64_t row0, int64_t nBlocks) {
    using W = typename T::W;
    using A = typename T::A;
    const auto* wBase = static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0) * m.weightRowBytes;
    const W* wRow[8];
    const A* aRow[NT];
    for (int r = 0; r < 8; ++r) wRow[r] = reinterpret_cast<const W*>(wBase + r * m.weightRowBytes);
    for (int t = 0; t < NT; ++t)
        aRow[t] =
            reinterpret_cast<const A*>(static_cast<const uint8_t*>(m.acts) + static_cast<size_t>(t) * m.actRowBytes);
    const size_t span = 8 * m.weightRowBytes, step = (span + nBlocks - 1) / nBlocks;
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        prefetchSlice(reinterpret_cast<uintptr_t>(wBase) + kPrefetchTiles * span, step, b);
        __m256i lo[4], hi[4];
        for (int k = 0; k < 4; ++k) T::pairWeights(wRow[k][b], wRow[k + 4][b], lo[k], hi[k]);
        const void* blocks[8];
        for (int r = 0; r < 8; ++r) blocks[r] = &wRow[r][b];
        __m256 dw, mw;
        blockScales<8>(blocks, dw, mw);
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
            const A& a = aRow[t][b];
            const __m256i aLo = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.qs)));
            const __m256i aHi =
                _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.qs + 16)));
            __m256i part[4];
            for (int k = 0; k < 4; ++k) part[k] = T::pairDot(lo[k], hi[k], aLo, aHi);
            // hadd: [rows 0, 1 | rows 4, 5] pair sums, then [rows 0-3 | rows 4-7] block sums.
            __m256i isum = _mm256_hadd_epi32(_mm256_hadd_epi32(part[0], part[1]), _mm256_hadd_epi32(part[2], part[3]));
            if constexpr (T::kOffset != 0) isum = _mm256_sub_epi32(isum, _mm256_set1_epi32(offsetSum<T>(a)));
            const __m256 terms = T::terms(dw, mw, _mm256_set1_ps(halfToFloat(a.d)), _mm256_set1_ps(T::actSum(a)), isum);
            acc[t] = _mm256_add_ps(acc[t], terms);
        }
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(m.y + t * m.yStride + row0, acc[t]);
}

template <class T>
void singleValues(const MatmulArgs& m, int64_t row, int64_t tokenBegin, int64_t nBlocks) {
    const auto* w = reinterpret_cast<const typename T::W*>(static_cast<const uint8_t*>(m.weights) +
                                                           static_cast<size_t>(row) * m.weightRowBytes);
    for (int64_t t = tokenBegin; t < m.nTokens; ++t) {
        const auto* a = reinterpret_cast<const typename T::A*>(static_cast<const uint8_t*>(m.acts) +
                                                               static_cast<size_t>(t) * m.actRowBytes);
        m.y[t * m.yStride + row] = dotRow<T>(w, a, nBlocks);
    }
}

// 1 to 3 tokens (decode, batched decode, short verifications): pair tiles of 8 rows × all
// the tokens. More tokens (where the panels do not apply): tiles of 4 rows × 2 tokens, so
// that each unpacked weight block serves two tokens; an odd last token takes 4 × 1 tiles.
// The rows of a range that fill no 8-row tile take the 4-row tiles (several tokens) or
// single values.
template <class T>
void rows(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    const int64_t nBlocks = m.nCols / kQK;
    int64_t r = rowBegin;
    switch (m.nTokens) {
    case 1:
        for (; r + 8 <= rowEnd; r += 8) pairTile<T, 1>(m, r, nBlocks);
        break;
    case 2:
        for (; r + 8 <= rowEnd; r += 8) pairTile<T, 2>(m, r, nBlocks);
        break;
    case 3:
        for (; r + 8 <= rowEnd; r += 8) pairTile<T, 3>(m, r, nBlocks);
        break;
    default: break;
    }
    if (m.nTokens > 1) {
        for (; r + 4 <= rowEnd; r += 4) {
            int64_t t = 0;
            for (; t + 2 <= m.nTokens; t += 2) tile<T, 4, 2>(m, r, t, nBlocks);
            if (t < m.nTokens) tile<T, 4, 1>(m, r, t, nBlocks);
        }
    }
    for (; r < rowEnd; ++r) singleValues<T>(m, r, 0, nBlocks);
}

template <class T>
float dotRowUntyped(const void* w, const void* a, int64_t n) {
    return dotRow<T>(static_cast<const typename T::W*>(w), static_cast<const typename T::A*>(a), n / kQK);
}

// The entry points of kernels.h for one policy.
template <class Dot>
void matmulRowsWith(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    switch (m.wType) {
    case DType::Q4_0: return rows<TQ4_0<Dot>>(m, rowBegin, rowEnd);
    case DType::Q4_1: return rows<TQ4_1<Dot>>(m, rowBegin, rowEnd);
    case DType::Q5_0: return rows<TQ5_0<Dot>>(m, rowBegin, rowEnd);
    case DType::Q5_1: return rows<TQ5_1<Dot>>(m, rowBegin, rowEnd);
    case DType::Q8_0: return rows<TQ8_0<Dot>>(m, rowBegin, rowEnd);
    default: return;
    }
}

template <class Dot>
float vecDotWith(DType w, const void* weightRow, const void* actRow, int64_t n) {
    switch (w) {
    case DType::Q4_0: return dotRowUntyped<TQ4_0<Dot>>(weightRow, actRow, n);
    case DType::Q4_1: return dotRowUntyped<TQ4_1<Dot>>(weightRow, actRow, n);
    case DType::Q5_0: return dotRowUntyped<TQ5_0<Dot>>(weightRow, actRow, n);
    case DType::Q5_1: return dotRowUntyped<TQ5_1<Dot>>(weightRow, actRow, n);
    case DType::Q8_0: return dotRowUntyped<TQ8_0<Dot>>(weightRow, actRow, n);
    default: return 0.0f;
    }
}

}  // namespace
}  // namespace hearth::avx2
