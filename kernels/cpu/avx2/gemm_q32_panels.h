// The prefill gemm of the 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0), written once
// and compiled twice: gemm_q32.cpp (AVX2: maddubs/madd) and gemm_q32_vnni.cpp (AVX-VNNI:
// vpdpbusd) include it with their Dot policy. Include ONLY from those two files.
//
// 8 weight rows are unpacked once into a panel where each 32-byte vector holds 4 values of each
// of the 8 rows, so that one broadcast of 4 activation bytes feeds 8 rows and the block sums
// come out one row per lane (no horizontal sums). Integer block sums are exact however they
// are grouped; the float term per block is the reference's expression (quants.h), lane by lane,
// added in block order: each value is bitwise the matrix-vector one. -ffp-contract=off.
//
// A Dot policy provides, for each type T below:
//   template <class T, int NT> static void addBlock(const PanelBlock&, const ActBlock* a, __m256* acc);
//     for tokens t < NT: the exact Σ w·a of block a[t] against the panel block, one row per
//     lane, and acc[t] += its float term (addBlockTerm);
//   template <class T> static uint32_t offsets(__m256i activations);
//     ActBlock::offsets for T (what the integer sums start from to take T::kOffset off).
#pragma once

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

// One block of 8 rows: q[k] lane r = values 4k..4k+3 of row r (unsigned; for Q8_0 their
// magnitudes, with the signed values in w); d and m of each row as floats (exact conversions).
struct PanelBlock {
    alignas(32) uint8_t q[8][32];
    alignas(32) float d[8];
    alignas(32) float m[8];
    alignas(32) int8_t w[8][32];  // Q8_0 only
};

// What the tiles need of one (token, block), copied once per batch so that a tile reads one
// stream: the activation bytes, da and sa as floats, and for Q4_0/Q5_0 the offset terms.
struct ActBlock {
    int8_t q[32];
    float d;
    float s;
    uint32_t offsets;  // the offset term of Q4_0/Q5_0, in the Dot policy's form (0 for the others)
    uint32_t unused;
};

// Tokens in groups of kTileTokens (the last one shorter), each group block-major: a tile's
// tokens lie side by side in one short stride. (Token-major rows of 48-byte blocks would put
// a tile's blocks 48·nTokens bytes apart, a stride that maps them to a few L1 sets.)
constexpr int kTileTokens = 6;

struct GroupSpan {
    int64_t first;  // index of (block 0, the token)
    int64_t stride;  // between consecutive blocks of one token: the group's size
};
inline GroupSpan groupSpan(int64_t token, int64_t nTokens, int64_t nBlocks) {
    const int64_t g = token / kTileTokens * kTileTokens;
    const int64_t size = nTokens - g < kTileTokens ? nTokens - g : kTileTokens;
    return {g * nBlocks + (token - g), size};
}

// The weight types: unsigned values u (Q4: 0..15, Q5: 0..31) with weight value u - kOffset, or
// (Q8_0) signed values, whose magnitudes the panel holds with the values beside them.
// kGroup: products per int16 partial sum in the AVX2 policy (gemm_q32.cpp says why).
struct TQ4_0 {
    using W = BlockQ4_0;
    using A = BlockQ8_0;
    static constexpr int kOffset = 8, kGroup = 8;
    static constexpr bool kSigned = false, kHasMin = false;
    static __m256i values(const W& b) { return unpackNibbles32(b.qs); }
};
struct TQ5_0 {
    using W = BlockQ5_0;
    using A = BlockQ8_0;
    static constexpr int kOffset = 16, kGroup = 8;
    static constexpr bool kSigned = false, kHasMin = false;
    static __m256i values(const W& b) { return _mm256_or_si256(unpackNibbles32(b.qs), fifthBits32(b.qh)); }
};
struct TQ4_1 {
    using W = BlockQ4_1;
    using A = BlockQ8_1;
    static constexpr int kOffset = 0, kGroup = 8;
    static constexpr bool kSigned = false, kHasMin = true;
    static __m256i values(const W& b) { return unpackNibbles32(b.qs); }
};
struct TQ5_1 {
    using W = BlockQ5_1;
    using A = BlockQ8_1;
    static constexpr int kOffset = 0, kGroup = 4;
    static constexpr bool kSigned = false, kHasMin = true;
    static __m256i values(const W& b) { return _mm256_or_si256(unpackNibbles32(b.qs), fifthBits32(b.qh)); }
};
struct TQ8_0 {
    using W = BlockQ8_0;
    using A = BlockQ8_0;
    static constexpr int kOffset = 0, kGroup = 1;
    static constexpr bool kSigned = true, kHasMin = false;
    static __m256i values(const W& b) { return load256(b.qs); }
};

template <class T>
float minOf(const typename T::W& b) {
    if constexpr (T::kHasMin) return halfToFloat(b.m);
    else return 0.0f;
}

template <class T>
void packPanel(const MatmulArgs& m, int64_t row0, int64_t nBlocks, PanelBlock* panel) {
    using W = typename T::W;
    const auto* base = static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0) * m.weightRowBytes;
    // The next panel's rows are fetched while this one is packed (small batches, e.g. a
    // speculative verify, are bound by reading the weights, as decode is).
    const size_t span = 8 * m.weightRowBytes, step = (span + nBlocks - 1) / nBlocks;
    for (int64_t b = 0; b < nBlocks; ++b) {
        prefetchSlice(reinterpret_cast<uintptr_t>(base) + span, step, b);
        __m256i v[8];
        for (int r = 0; r < 8; ++r) {
            const W& block = reinterpret_cast<const W*>(base + r * m.weightRowBytes)[b];
            v[r] = T::values(block);
            panel[b].d[r] = halfToFloat(block.d);
            panel[b].m[r] = minOf<T>(block);
        }
        transpose8x8Epi32(v);
        for (int k = 0; k < 8; ++k) {
            if constexpr (T::kSigned) {
                _mm256_store_si256(reinterpret_cast<__m256i*>(panel[b].w[k]), v[k]);
                v[k] = _mm256_sign_epi8(v[k], v[k]);
            }
            _mm256_store_si256(reinterpret_cast<__m256i*>(panel[b].q[k]), v[k]);
        }
    }
}

inline __m256i broadcast4(const int8_t* p) {
    int word;
    std::memcpy(&word, p, 4);
    return _mm256_set1_epi32(word);
}
inline __m256i panelVec(const void* p) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }

// acc += the reference's float term of one block for one token, lane by lane (8 rows):
// (dw*da)*isum, plus mw*sa for the types with a min.
template <class T>
inline void addBlockTerm(__m256& acc, __m256 dw, const PanelBlock& pb, const ActBlock& a, __m256i isum) {
    const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(dw, _mm256_broadcast_ss(&a.d)), _mm256_cvtepi32_ps(isum));
    if constexpr (T::kHasMin)
        acc = _mm256_add_ps(acc, _mm256_add_ps(scaled, _mm256_mul_ps(_mm256_load_ps(pb.m), _mm256_broadcast_ss(&a.s))));
    else acc = _mm256_add_ps(acc, scaled);
}

// NT tokens, whose blocks are a[b * stride + t], against the 8-row panel; y rows row0..row0+7.
template <class T, class Dot, int NT>
void tile(const MatmulArgs& m, const ActBlock* a, int64_t stride, const PanelBlock* panel, int64_t row0, int64_t token0,
          int64_t nBlocks) {
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b, a += stride) Dot::template addBlock<T, NT>(panel[b], a, acc);
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(m.y + (token0 + t) * m.yStride + row0, acc[t]);
}

template <class T, class Dot>
void panelRows(const MatmulArgs& m, const ActBlock* info, int64_t row0, void* scratch) {
    const int64_t nBlocks = m.nCols / kQK;
    auto* panel = static_cast<PanelBlock*>(scratch);
    packPanel<T>(m, row0, nBlocks, panel);
    for (int64_t g = 0; g < m.nTokens; g += kTileTokens) {
        const GroupSpan span = groupSpan(g, m.nTokens, nBlocks);
        const ActBlock* group = info + span.first;
        if (span.stride == kTileTokens) {
            tile<T, Dot, kTileTokens>(m, group, span.stride, panel, row0, g, nBlocks);
            continue;
        }
        int64_t t = 0;  // the last, shorter group
        if (span.stride - t >= 4) tile<T, Dot, 4>(m, group + t, span.stride, panel, row0, g + t, nBlocks), t += 4;
        if (span.stride - t >= 2) tile<T, Dot, 2>(m, group + t, span.stride, panel, row0, g + t, nBlocks), t += 2;
        if (span.stride - t >= 1) tile<T, Dot, 1>(m, group + t, span.stride, panel, row0, g + t, nBlocks);
    }
}

template <class T, class Dot>
void actInfo(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, ActBlock* out) {
    const int64_t nBlocks = m.nCols / kQK;
    for (int64_t t = tokenBegin; t < tokenEnd; ++t) {
        const auto* a = reinterpret_cast<const typename T::A*>(static_cast<const uint8_t*>(m.acts) +
                                                               static_cast<size_t>(t) * m.actRowBytes);
        const GroupSpan span = groupSpan(t, m.nTokens, nBlocks);
        for (int64_t b = 0; b < nBlocks; ++b) {
            ActBlock& info = out[span.first + b * span.stride];
            const __m256i q = load256(a[b].qs);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(info.q), q);
            info.d = halfToFloat(a[b].d);
            if constexpr (T::kHasMin) info.s = halfToFloat(a[b].s);
            else info.s = 0.0f;
            info.offsets = Dot::template offsets<T>(q);
            info.unused = 0;
        }
    }
}

// The entry points of kernels.h for one policy.
template <class Dot>
void gemmActInfoWith(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    auto* out = static_cast<ActBlock*>(info);
    switch (m.wType) {
    case DType::Q4_0: return actInfo<TQ4_0, Dot>(m, tokenBegin, tokenEnd, out);
    case DType::Q4_1: return actInfo<TQ4_1, Dot>(m, tokenBegin, tokenEnd, out);
    case DType::Q5_0: return actInfo<TQ5_0, Dot>(m, tokenBegin, tokenEnd, out);
    case DType::Q5_1: return actInfo<TQ5_1, Dot>(m, tokenBegin, tokenEnd, out);
    case DType::Q8_0: return actInfo<TQ8_0, Dot>(m, tokenBegin, tokenEnd, out);
    default: return;
    }
}

template <class Dot>
void gemmPanelWith(const MatmulArgs& m, const void* actInfo, int64_t row0, void* scratch) {
    const auto* info = static_cast<const ActBlock*>(actInfo);
    switch (m.wType) {
    case DType::Q4_0: return panelRows<TQ4_0, Dot>(m, info, row0, scratch);
    case DType::Q4_1: return panelRows<TQ4_1, Dot>(m, info, row0, scratch);
    case DType::Q5_0: return panelRows<TQ5_0, Dot>(m, info, row0, scratch);
    case DType::Q5_1: return panelRows<TQ5_1, Dot>(m, info, row0, scratch);
    case DType::Q8_0: return panelRows<TQ8_0, Dot>(m, info, row0, scratch);
    default: return;
    }
}

}  // namespace
}  // namespace hearth::avx2
