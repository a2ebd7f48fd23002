// Prefill products of the 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): 8 weight rows
// are unpacked once into a panel where each 32-byte vector holds 4 values of each of the 8
// rows, so that one broadcast of 4 activation bytes feeds 8 rows and the block sums come out
// one row per lane (no horizontal sums). Integer block sums are exact however they are
// grouped; the float term per block is the reference's expression (quants.h), lane by lane,
// added in block order: each value is bitwise the matrix-vector one. -ffp-contract=off.
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

// Unsigned values u (Q4: 0..15, Q5: 0..31) with weight value u - offset: isum = Σu·a - offset·Σa,
// where offset·Σa comes per (token, block) from gemmActInfo. maddubs pairs are at most
// 2·15·128 = 3840 (Q4) or 2·31·128 = 7936 (Q5), so kGroup (8 or 4) of them add in int16
// without overflow before one madd widens to int32.
struct TQ4_0 {
    using W = BlockQ4_0; using A = BlockQ8_0;
    static constexpr int kOffset = 8, kGroup = 8;
    static constexpr bool kSigned = false, kHasMin = false;
    static __m256i values(const W& b) { return unpackNibbles32(b.qs); }
};
struct TQ5_0 {
    using W = BlockQ5_0; using A = BlockQ8_0;
    static constexpr int kOffset = 16, kGroup = 4;
    static constexpr bool kSigned = false, kHasMin = false;
    static __m256i values(const W& b) { return _mm256_or_si256(unpackNibbles32(b.qs), fifthBits32(b.qh)); }
};
struct TQ4_1 {
    using W = BlockQ4_1; using A = BlockQ8_1;
    static constexpr int kOffset = 0, kGroup = 8;
    static constexpr bool kSigned = false, kHasMin = true;
    static __m256i values(const W& b) { return unpackNibbles32(b.qs); }
};
struct TQ5_1 {
    using W = BlockQ5_1; using A = BlockQ8_1;
    static constexpr int kOffset = 0, kGroup = 4;
    static constexpr bool kSigned = false, kHasMin = true;
    static __m256i values(const W& b) { return _mm256_or_si256(unpackNibbles32(b.qs), fifthBits32(b.qh)); }
};
// Signed values: |w|·sign(a, w) per pair (exact while no activation is -128, as dotS8).
struct TQ8_0 {
    using W = BlockQ8_0; using A = BlockQ8_0;
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

// Exact integer block sums of NT tokens against one panel block, one row per lane. Token by
// token: the panel's vectors are reloaded from L1 for each token (loads are cheap) so that
// only a few vectors are live and nothing spills (measured: 1.5x faster than loading each
// vector once for the NT tokens, which made GCC spill the partial sums).
template <class T, int NT>
inline void blockSums(const PanelBlock& pb, const typename T::A* const* a, int64_t b, __m256i* isum) {
    const __m256i ones = _mm256_set1_epi16(1);
    const auto panelQ = [&](int k) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(pb.q[k])); };
    for (int t = 0; t < NT; ++t) {
        const int8_t* qs = a[t][b].qs;
        __m256i sum = _mm256_setzero_si256(), part = _mm256_setzero_si256();
        for (int k = 0; k < 8; ++k) {
            const __m256i w = panelQ(k);
            if constexpr (T::kSigned) {
                const __m256i signs = _mm256_load_si256(reinterpret_cast<const __m256i*>(pb.w[k]));
                const __m256i prod = _mm256_maddubs_epi16(w, _mm256_sign_epi8(broadcast4(qs + 4 * k), signs));
                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(prod, ones));
            } else {
                const __m256i prod = _mm256_maddubs_epi16(w, broadcast4(qs + 4 * k));
                part = k % T::kGroup == 0 ? prod : _mm256_add_epi16(part, prod);
                if (k % T::kGroup == T::kGroup - 1) sum = _mm256_add_epi32(sum, _mm256_madd_epi16(part, ones));
            }
        }
        isum[t] = sum;
    }
}

// What the tiles need of each (token, block) besides its values, computed once per batch:
// da and sa as floats (broadcast loads instead of conversions in every tile) and offset·Σa.
struct ActInfo {
    float d;
    float s;
    int32_t offsetSum;
    int32_t unused;
};

// NT tokens (rows t of acts from token0) against the 8-row panel; y rows row0..row0+7.
template <class T, int NT>
void tile(const MatmulArgs& m, const ActInfo* info, const PanelBlock* panel, int64_t row0, int64_t token0,
          int64_t nBlocks) {
    using A = typename T::A;
    const A* a[NT];
    const ActInfo* inf[NT];
    for (int t = 0; t < NT; ++t) {
        a[t] = reinterpret_cast<const A*>(static_cast<const uint8_t*>(m.acts) + static_cast<size_t>(token0 + t) * m.actRowBytes);
        inf[t] = info + (token0 + t) * nBlocks;
    }
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        __m256i isum[NT];
        blockSums<T, NT>(panel[b], a, b, isum);
        const __m256 dw = _mm256_load_ps(panel[b].d);
        for (int t = 0; t < NT; ++t) {
            if constexpr (T::kOffset != 0) isum[t] = _mm256_sub_epi32(isum[t], _mm256_set1_epi32(inf[t][b].offsetSum));
            const __m256 da = _mm256_broadcast_ss(&inf[t][b].d);
            const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(dw, da), _mm256_cvtepi32_ps(isum[t]));
            if constexpr (T::kHasMin)  // (dw*da)*isum + mw*sa
                acc[t] = _mm256_add_ps(acc[t], _mm256_add_ps(scaled, _mm256_mul_ps(_mm256_load_ps(panel[b].m),
                                                                                  _mm256_broadcast_ss(&inf[t][b].s))));
            else
                acc[t] = _mm256_add_ps(acc[t], scaled);
        }
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(m.y + (token0 + t) * m.yStride + row0, acc[t]);
}

template <class T>
void panelRows(const MatmulArgs& m, const ActInfo* info, int64_t row0, void* scratch) {
    const int64_t nBlocks = m.nCols / kQK;
    auto* panel = static_cast<PanelBlock*>(scratch);
    packPanel<T>(m, row0, nBlocks, panel);
    int64_t t = 0;
    for (; t + 4 <= m.nTokens; t += 4) tile<T, 4>(m, info, panel, row0, t, nBlocks);
    switch (m.nTokens - t) {
    case 3: return tile<T, 3>(m, info, panel, row0, t, nBlocks);
    case 2: return tile<T, 2>(m, info, panel, row0, t, nBlocks);
    case 1: return tile<T, 1>(m, info, panel, row0, t, nBlocks);
    default: return;
    }
}

template <class T>
void actInfo(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, ActInfo* out) {
    const int64_t nBlocks = m.nCols / kQK;
    const __m256i ones8 = _mm256_set1_epi8(1);
    for (int64_t t = tokenBegin; t < tokenEnd; ++t) {
        const auto* a = reinterpret_cast<const typename T::A*>(static_cast<const uint8_t*>(m.acts) +
                                                               static_cast<size_t>(t) * m.actRowBytes);
        for (int64_t b = 0; b < nBlocks; ++b) {
            ActInfo& info = out[t * nBlocks + b];
            info.d = halfToFloat(a[b].d);
            if constexpr (T::kHasMin) info.s = halfToFloat(a[b].s);
            else info.s = 0.0f;
            info.offsetSum = T::kOffset == 0 ? 0 : T::kOffset * hsumInt32(dotU8(ones8, load256(a[b].qs)));
            info.unused = 0;
        }
    }
}

}  // namespace

size_t gemmPanelBytesQ32(int64_t nCols) { return static_cast<size_t>(nCols / kQK) * sizeof(PanelBlock); }

size_t gemmActInfoBytesQ32(int64_t nCols) { return static_cast<size_t>(nCols / kQK) * sizeof(ActInfo); }

void gemmActInfoQ32(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    auto* out = static_cast<ActInfo*>(info);
    switch (m.wType) {
    case DType::Q4_0: return actInfo<TQ4_0>(m, tokenBegin, tokenEnd, out);
    case DType::Q4_1: return actInfo<TQ4_1>(m, tokenBegin, tokenEnd, out);
    case DType::Q5_0: return actInfo<TQ5_0>(m, tokenBegin, tokenEnd, out);
    case DType::Q5_1: return actInfo<TQ5_1>(m, tokenBegin, tokenEnd, out);
    case DType::Q8_0: return actInfo<TQ8_0>(m, tokenBegin, tokenEnd, out);
    default: return;
    }
}

void gemmPanelQ32(const MatmulArgs& m, const void* actInfo, int64_t row0, void* scratch) {
    const auto* info = static_cast<const ActInfo*>(actInfo);
    switch (m.wType) {
    case DType::Q4_0: return panelRows<TQ4_0>(m, info, row0, scratch);
    case DType::Q4_1: return panelRows<TQ4_1>(m, info, row0, scratch);
    case DType::Q5_0: return panelRows<TQ5_0>(m, info, row0, scratch);
    case DType::Q5_1: return panelRows<TQ5_1>(m, info, row0, scratch);
    case DType::Q8_0: return panelRows<TQ8_0>(m, info, row0, scratch);
    default: return;
    }
}

}  // namespace hearth::avx2
