// Prefill products of the K-quants (Q4_K, Q5_K, Q6_K) against Q8_K activations, on panels of
// 8 rows as gemm_q32.cpp: each 32-byte vector holds 4 values of each of the 8 rows, one
// broadcast of 4 activation bytes feeds the 8 rows, and the sub-block scales multiply in the
// madd that widens to int32, so isum and msum come out one row per lane, exact. The float
// term per super-block is the reference's (quants.h), added in block order: bitwise the
// matrix-vector value. Built with -ffp-contract=off.
#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/kquant_unpack.h"
#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

// One super-block of 8 rows. q[8j + k] lane r = values 32j + 4k .. +3 of row r (unsigned).
// scale[g] lane r = (scale of group g of row r) twice, as int16: a madd operand (groups of
// 32 values for Q4_K/Q5_K, of 16 for Q6_K). pair[p] lane r = (min or scale 2p, 2p + 1) of
// row r: mins of Q4_K/Q5_K, scales of Q6_K (for its -32 correction).
struct PanelBlock {
    alignas(32) uint8_t q[64][32];
    alignas(32) int16_t scale[16][16];
    alignas(32) int16_t pair[8][16];
    alignas(32) float d[8];
    alignas(32) float dmin[8];
};

// kGroup: maddubs results summed in int16 before a madd (pairs at most 2·63·128 = 16128 for
// Q6_K, 2·31·128 for Q5_K, 2·15·128 for Q4_K: no overflow). kStepsPerScale: 4-value steps
// per scale.
struct TQ4_K {
    using W = BlockQ4_K;
    static constexpr int kGroup = 8, kStepsPerScale = 8, kScales = 8;
    static constexpr bool kHasMins = true;
    static __m256i chunk(const W& b, int j) { return q4kChunk(b.qs, j); }
};
struct TQ5_K {
    using W = BlockQ5_K;
    static constexpr int kGroup = 4, kStepsPerScale = 8, kScales = 8;
    static constexpr bool kHasMins = true;
    static __m256i chunk(const W& b, int j) { return q5kChunk(b, j); }
};
struct TQ6_K {
    using W = BlockQ6_K;
    static constexpr int kGroup = 2, kStepsPerScale = 4, kScales = 16;
    static constexpr bool kHasMins = false;
    static __m256i chunk(const W& b, int j) { return q6kChunk(b, j); }
};

template <class T>
void packScales(const typename T::W& b, int r, PanelBlock& pb) {
    KScales k;
    alignas(16) int16_t mins[8] = {};
    if constexpr (T::kHasMins) {
        unpackScalesMins(b.scales, k);
        _mm_store_si128(reinterpret_cast<__m128i*>(mins), k.mins);
        pb.dmin[r] = halfToFloat(b.dmin);
    } else {
        unpackScalesQ6(b, k);
        pb.dmin[r] = 0.0f;
    }
    pb.d[r] = halfToFloat(b.d);
    for (int g = 0; g < T::kScales; ++g) pb.scale[g][2 * r] = pb.scale[g][2 * r + 1] = k.scale[g];
    const int16_t* pairSource = T::kHasMins ? mins : k.scale;
    for (int p = 0; p < T::kScales / 2; ++p) {
        pb.pair[p][2 * r] = pairSource[2 * p];
        pb.pair[p][2 * r + 1] = pairSource[2 * p + 1];
    }
}

template <class T>
void packPanel(const MatmulArgs& m, int64_t row0, int64_t nBlocks, PanelBlock* panel) {
    using W = typename T::W;
    const auto* base = static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0) * m.weightRowBytes;
    for (int64_t b = 0; b < nBlocks; ++b) {
        const W* rows[8];
        for (int r = 0; r < 8; ++r) {
            rows[r] = reinterpret_cast<const W*>(base + r * m.weightRowBytes) + b;
            packScales<T>(*rows[r], r, panel[b]);
        }
        for (int j = 0; j < kQKK / 32; ++j) {
            __m256i v[8];
            for (int r = 0; r < 8; ++r) v[r] = T::chunk(*rows[r], j);
            transpose8x8Epi32(v);
            for (int k = 0; k < 8; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(panel[b].q[8 * j + k]), v[k]);
        }
    }
}

inline __m256i broadcast4(const void* p) {
    int word;
    std::memcpy(&word, p, 4);
    return _mm256_set1_epi32(word);
}

inline __m256i load32(const void* p) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }

// Σ_g scale_g · Σ u·a over the super-block, for NT tokens, one row per lane. Each panel vector
// and scale is loaded once for the NT tokens (measured: reloading them per token, as
// gemm_q32.cpp does, makes Q6_K's groups of 16 values load-bound).
template <class T, int NT>
inline void superBlockSums(const PanelBlock& pb, const BlockQ8_K* const* a, __m256i* isum) {
    __m256i part[NT] = {};  // overwritten at each group start; initialised for the compiler
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
    for (int s = 0; s < 64; ++s) {
        const __m256i w = load32(pb.q[s]);
        for (int t = 0; t < NT; ++t) {
            const __m256i prod = _mm256_maddubs_epi16(w, broadcast4(a[t]->qs + 4 * s));
            part[t] = s % T::kGroup == 0 ? prod : _mm256_add_epi16(part[t], prod);
        }
        if (s % T::kGroup == T::kGroup - 1) {
            const __m256i scale = load32(pb.scale[s / T::kStepsPerScale]);
            for (int t = 0; t < NT; ++t) isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(part[t], scale));
        }
    }
}

// Q4_K/Q5_K: msum = Σ_j min_j · (bsums[2j] + bsums[2j+1]); Q6_K: Σ_g scale_g · bsums[g].
template <class T>
inline __m256i pairSums(const PanelBlock& pb, const BlockQ8_K& a) {
    alignas(32) int16_t sums[16];
    const int16_t* source = a.bsums;
    if constexpr (T::kHasMins) {
        const __m256i bsums = load256(a.bsums);
        _mm_store_si128(reinterpret_cast<__m128i*>(sums),
                        _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1)));
        source = sums;
    }
    __m256i total = _mm256_setzero_si256();
    for (int p = 0; p < T::kScales / 2; ++p)
        total = _mm256_add_epi32(total, _mm256_madd_epi16(load32(pb.pair[p]), broadcast4(source + 2 * p)));
    return total;
}

template <class T, int NT>
void tile(const MatmulArgs& m, const PanelBlock* panel, int64_t row0, int64_t token0, int64_t nBlocks) {
    const BlockQ8_K* a[NT];
    for (int t = 0; t < NT; ++t)
        a[t] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(m.acts) +
                                                  static_cast<size_t>(token0 + t) * m.actRowBytes);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        const PanelBlock& pb = panel[b];
        __m256i isum[NT];
        superBlockSums<T, NT>(pb, a, isum);
        const __m256 d = _mm256_load_ps(pb.d);
        for (int t = 0; t < NT; ++t) {
            const __m256 da = _mm256_set1_ps(a[t]->d);
            const __m256i sums = pairSums<T>(pb, *a[t]);
            if constexpr (T::kHasMins) {  // (d*da)*isum - (dmin*da)*msum
                const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(d, da), _mm256_cvtepi32_ps(isum[t]));
                const __m256 offset = _mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(pb.dmin), da), _mm256_cvtepi32_ps(sums));
                acc[t] = _mm256_add_ps(acc[t], _mm256_sub_ps(scaled, offset));
            } else {  // u = value + 32: isum - 32·Σ scale·bsum, then (d*da)*isum
                const __m256i exact = _mm256_sub_epi32(isum[t], _mm256_slli_epi32(sums, 5));
                acc[t] = _mm256_add_ps(acc[t], _mm256_mul_ps(_mm256_mul_ps(d, da), _mm256_cvtepi32_ps(exact)));
            }
            ++a[t];
        }
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(m.y + (token0 + t) * m.yStride + row0, acc[t]);
}

template <class T>
void panelRows(const MatmulArgs& m, int64_t row0, void* scratch) {
    const int64_t nBlocks = m.nCols / kQKK;
    auto* panel = static_cast<PanelBlock*>(scratch);
    packPanel<T>(m, row0, nBlocks, panel);
    int64_t t = 0;
    for (; t + 4 <= m.nTokens; t += 4) tile<T, 4>(m, panel, row0, t, nBlocks);
    switch (m.nTokens - t) {
    case 3: return tile<T, 3>(m, panel, row0, t, nBlocks);
    case 2: return tile<T, 2>(m, panel, row0, t, nBlocks);
    case 1: return tile<T, 1>(m, panel, row0, t, nBlocks);
    default: return;
    }
}

}  // namespace

size_t gemmPanelBytesK(int64_t nCols) { return static_cast<size_t>(nCols / kQKK) * sizeof(PanelBlock); }

void gemmPanelK(const MatmulArgs& m, int64_t row0, void* scratch) {
    switch (m.wType) {
    case DType::Q4_K: return panelRows<TQ4_K>(m, row0, scratch);
    case DType::Q5_K: return panelRows<TQ5_K>(m, row0, scratch);
    case DType::Q6_K: return panelRows<TQ6_K>(m, row0, scratch);
    default: return;
    }
}

}  // namespace hearth::avx2
