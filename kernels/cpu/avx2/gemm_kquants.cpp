// Prefill products of the K-quants (Q4_K, Q5_K, Q6_K) against Q8_K activations, on panels of
// 8 rows as gemm_q32.cpp: each 32-byte vector holds 4 values of each of the 8 rows, one
// broadcast of 4 activation bytes feeds the 8 rows, and the sub-block scales multiply in the
// madd that widens to int32, so isum and msum come out one row per lane, exact. The float
// term per super-block is the reference's (quants.h), added in block order: bitwise the
// matrix-vector value. Built with -ffp-contract=off.
// Measured (tests/perf/gemm_kquant_bench.cpp): the groups of maddubs as straight-line code
// with the int16 chains pinned (keepChain), the mins' operand computed once per batch
// (gemmActInfoK), give 1.4x the throughput of a loop with a branch per step; where the CPU
// has AVX-VNNI (MatmulArgs::avxVnni), vpdpbusd tiles add 1.1-1.2x (Q4_K, Q5_K) and ~1.1x (Q6_K).
#include <type_traits>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/kquant_unpack.h"
#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

// One super-block of 8 rows. q[8j + k] lane r = values 32j + 4k .. +3 of row r (unsigned).
// scale[g] lane r = (scale of group g of row r) twice, as int16: a madd operand (groups of
// 32 values for Q4_K/Q5_K, of 16 for Q6_K). pair[p] lane r = (min 2p, min 2p + 1) of row r
// for Q4_K/Q5_K (p < 4; a madd operand against ActInfoK's sums), (scale 2p, scale 2p + 1)
// for Q6_K (against bsums[2p], bsums[2p + 1], for its -32 correction).
template <int kScales>
struct PanelBlock {
    alignas(32) uint8_t q[64][32];
    alignas(32) int32_t scale[kScales][8];
    alignas(32) int32_t pair[8][8];
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
    static __m256i scales16(const W& b) { return scalesMins16(b.scales); }
};
struct TQ5_K {
    using W = BlockQ5_K;
    static constexpr int kGroup = 4, kStepsPerScale = 8, kScales = 8;
    static constexpr bool kHasMins = true;
    static __m256i chunk(const W& b, int j) { return q5kChunk(b, j); }
    static __m256i scales16(const W& b) { return scalesMins16(b.scales); }
};
struct TQ6_K {
    using W = BlockQ6_K;
    static constexpr int kGroup = 2, kStepsPerScale = 4, kScales = 16;
    static constexpr bool kHasMins = false;
    static __m256i chunk(const W& b, int j) { return q6kChunk(b, j); }
    static __m256i scales16(const W& b) { return scalesQ6(b); }
};

template <class T>
using Panel = PanelBlock<T::kScales>;

inline void store32(void* p, __m256i v) { _mm256_store_si256(static_cast<__m256i*>(p), v); }

// 8 int16 -> 8 int32 lanes, each holding its value twice (both int16 halves of a madd pair).
inline __m256i twice16(__m128i s16) {
    const __m256i x = _mm256_cvtepu16_epi32(s16);
    return _mm256_or_si256(x, _mm256_slli_epi32(x, 16));
}

// The scales (and mins) of one super-block of each of the 8 rows, transposed to one row per
// lane: v[r] holds row r's values, and after the 8x8 transpose v[g] lane r = value g of row r.
template <class T>
void packScales(const typename T::W* const* rows, Panel<T>& pb) {
    __m256i lo[8], hi[8], pairs[8];
    const f16_t* d[8];
    const f16_t* dmin[8];
    for (int r = 0; r < 8; ++r) {
        const __m256i s16 = T::scales16(*rows[r]);  // Q4_K/Q5_K: 8 scales, 8 mins; Q6_K: 16 scales
        lo[r] = twice16(_mm256_castsi256_si128(s16));
        hi[r] = twice16(_mm256_extracti128_si256(s16, 1));
        pairs[r] = T::kHasMins ? _mm256_zextsi128_si256(_mm256_extracti128_si256(s16, 1)) : s16;
        d[r] = &rows[r]->d;
        if constexpr (T::kHasMins) dmin[r] = &rows[r]->dmin;
    }
    transpose8x8Epi32(lo);
    transpose8x8Epi32(pairs);
    for (int g = 0; g < 8; ++g) store32(pb.scale[g], lo[g]);
    for (int p = 0; p < T::kScales / 2; ++p) store32(pb.pair[p], pairs[p]);
    if constexpr (!T::kHasMins) {
        transpose8x8Epi32(hi);
        for (int g = 0; g < 8; ++g) store32(pb.scale[8 + g], hi[g]);
    }
    _mm256_store_ps(pb.d, gatherHalves(d));
    _mm256_store_ps(pb.dmin, T::kHasMins ? gatherHalves(dmin) : _mm256_setzero_ps());
}

// Q4_K/Q5_K values: each 32 bytes of qs hold chunk 2i in their low nibbles and chunk 2i + 1 in
// their high nibbles (and qh bit j is the fifth bit of chunk j), so the bytes are transposed
// once for both chunks: half the transposes of unpacking chunk by chunk.
template <class T>
void packNibbles(const typename T::W* const* rows, Panel<T>& pb) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
    __m256i high[8];
    if constexpr (std::is_same_v<typename T::W, BlockQ5_K>) {
        for (int r = 0; r < 8; ++r) high[r] = load256(rows[r]->qh);
        transpose8x8Epi32(high);
    }
    for (int i = 0; i < kQKK / 64; ++i) {
        __m256i v[8];
        for (int r = 0; r < 8; ++r) v[r] = load256(rows[r]->qs + 32 * i);
        transpose8x8Epi32(v);
        for (int k = 0; k < 8; ++k) {
            __m256i lo = _mm256_and_si256(v[k], low4), hi = _mm256_and_si256(_mm256_srli_epi16(v[k], 4), low4);
            if constexpr (std::is_same_v<typename T::W, BlockQ5_K>) {
                lo =
                    _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high[k], 2 * i), one), 4));
                hi = _mm256_or_si256(
                    hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high[k], 2 * i + 1), one), 4));
            }
            store32(pb.q[8 * (2 * i) + k], lo);
            store32(pb.q[8 * (2 * i + 1) + k], hi);
        }
    }
}

template <class T>
void packPanel(const MatmulArgs& m, int64_t row0, int64_t nBlocks, Panel<T>* panel) {
    using W = typename T::W;
    const auto* base = static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0) * m.weightRowBytes;
    // The next panel's rows are fetched while this one is packed (as gemm_q32.cpp).
    const size_t span = 8 * m.weightRowBytes, step = (span + nBlocks - 1) / nBlocks;
    for (int64_t b = 0; b < nBlocks; ++b) {
        prefetchSlice(reinterpret_cast<uintptr_t>(base) + span, step, b);
        const W* rows[8];
        for (int r = 0; r < 8; ++r) rows[r] = reinterpret_cast<const W*>(base + r * m.weightRowBytes) + b;
        packScales<T>(rows, panel[b]);
        if constexpr (T::kHasMins) {
            packNibbles<T>(rows, panel[b]);
        } else {
            for (int j = 0; j < kQKK / 32; ++j) {
                __m256i v[8];
                for (int r = 0; r < 8; ++r) v[r] = T::chunk(*rows[r], j);
                transpose8x8Epi32(v);
                for (int k = 0; k < 8; ++k) store32(panel[b].q[8 * j + k], v[k]);
            }
        }
    }
}

inline __m256i broadcast4(const void* p) {
    int word;
    std::memcpy(&word, p, 4);
    return _mm256_set1_epi32(word);
}

inline __m256i load32(const void* p) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }

// An empty asm that takes v and gives it back: GCC may not reassociate a chain of integer adds
// through it. Without it, GCC turns each chain of kGroup adds into a tree, which needs all its
// maddubs results live at once: with NT tokens that spills (measured: 1.15x the instructions,
// spills included). Pinning every second add (pairs may still be reassociated) gave the
// fewest register copies.
inline void keepChain(__m256i& v) { asm("" : "+x"(v)); }

// One group of kGroup 4-value steps from step s0, for NT tokens: the int16 sums of maddubs,
// then one madd with the group's scales into isum. Unrolled straight-line code: each panel
// vector is loaded once for the NT tokens, the partial sums stay in registers.
template <class T, int NT>
inline void groupSums(const uint8_t (*q)[32], const int32_t* scale, const int8_t* const* qs, __m256i* isum) {
    __m256i part[NT];
#pragma GCC unroll 8
    for (int k = 0; k < T::kGroup; ++k) {
        const __m256i w = load32(q[k]);
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
            const __m256i prod = _mm256_maddubs_epi16(w, broadcast4(qs[t] + 4 * k));
            part[t] = k == 0 ? prod : _mm256_add_epi16(part[t], prod);
            if (k % 2 == 1) keepChain(part[t]);
        }
    }
    const __m256i s = load32(scale);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(part[t], s));
}

// Σ_g scale_g · Σ u·a over the super-block, for NT tokens, one row per lane.
template <class T, int NT>
inline void superBlockSums(const Panel<T>& pb, const BlockQ8_K* const* a, __m256i* isum) {
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
    constexpr int kGroups = 64 / T::kGroup;
#pragma GCC unroll 2
    for (int g = 0; g < kGroups; ++g) {
        const int s0 = g * T::kGroup;
        const int8_t* qs[NT];
        for (int t = 0; t < NT; ++t) qs[t] = a[t]->qs + 4 * s0;
        groupSums<T, NT>(pb.q + s0, pb.scale[s0 / T::kStepsPerScale], qs, isum);
    }
}

// The AVX-VNNI variant (MatmulArgs::avxVnni, only where cpuFeatures().canRunAvxVnni()): these
// functions alone are compiled for AVX-VNNI, the rest of the file stays AVX2.
#define HEARTH_AVX_VNNI __attribute__((target("avx2,fma,f16c,avxvnni")))

// One scale group (kStepsPerScale 4-value steps) for NT tokens with vpdpbusd: it adds the four
// u8·s8 products of each lane in int32 without saturation (Intel SDM, VPDPBUSD), exact with no
// int16 bound; two chains per token (even and odd steps) to hide its latency. Then the group's
// sum times its scale (vpmulld; the scale is both int16 halves of the lane: srai gives it
// sign-extended) into isum: the same exact integers as groupSums.
template <class T, int NT>
HEARTH_AVX_VNNI inline void groupSumsVnni(const uint8_t (*q)[32], const int32_t* scale, const int8_t* const* qs,
                                          __m256i* isum) {
    __m256i even[NT], odd[NT];
    for (int t = 0; t < NT; ++t) even[t] = odd[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int k = 0; k < T::kStepsPerScale; ++k) {
        const __m256i w = load32(q[k]);
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
            __m256i& chain = k % 2 == 0 ? even[t] : odd[t];
            chain = _mm256_dpbusd_avx_epi32(chain, w, broadcast4(qs[t] + 4 * k));
        }
    }
    const __m256i s = _mm256_srai_epi32(load32(scale), 16);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t)
        isum[t] = _mm256_add_epi32(isum[t], _mm256_mullo_epi32(_mm256_add_epi32(even[t], odd[t]), s));
}

template <class T, int NT>
HEARTH_AVX_VNNI inline void superBlockSumsVnni(const Panel<T>& pb, const BlockQ8_K* const* a, __m256i* isum) {
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
    for (int g = 0; g < T::kScales; ++g) {
        const int s0 = g * T::kStepsPerScale;
        const int8_t* qs[NT];
        for (int t = 0; t < NT; ++t) qs[t] = a[t]->qs + 4 * s0;
        groupSumsVnni<T, NT>(pb.q + s0, pb.scale[g], qs, isum);
    }
}

// What the tiles need of each (token, super-block) of Q4_K/Q5_K besides its values: the sums
// of the bsums pairs, bsums[2j] + bsums[2j+1] (at most 2·16·128 in magnitude: int16), the
// operand of the min term, computed once per batch rather than once per panel.
struct ActInfoK {
    int16_t pairSums[8];
};

// Q4_K/Q5_K: msum = Σ_j min_j · (bsums[2j] + bsums[2j+1]) from source = ActInfoK::pairSums;
// Q6_K: Σ_g scale_g · bsums[g] from source = bsums. The sums are broadcast straight from memory
// (no shuffles: the adds of the tiles need port 5).
template <class T>
inline __m256i pairSums(const Panel<T>& pb, const int16_t* source) {
    __m256i total = _mm256_madd_epi16(load32(pb.pair[0]), broadcast4(source));
    for (int p = 1; p < T::kScales / 2; ++p)
        total = _mm256_add_epi32(total, _mm256_madd_epi16(load32(pb.pair[p]), broadcast4(source + 2 * p)));
    return total;
}

// The reference's float term of one super-block for the 8 rows of one token.
template <class T>
inline __m256 blockTerm(const Panel<T>& pb, const BlockQ8_K& a, const int16_t* pairSource, __m256i isum) {
    const __m256 da = _mm256_broadcast_ss(&a.d);
    const __m256i sums = pairSums<T>(pb, pairSource);
    if constexpr (T::kHasMins) {  // (d*da)*isum - (dmin*da)*msum
        const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(pb.d), da), _mm256_cvtepi32_ps(isum));
        const __m256 offset = _mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(pb.dmin), da), _mm256_cvtepi32_ps(sums));
        return _mm256_sub_ps(scaled, offset);
    } else {  // u = value + 32: isum - 32·Σ scale·bsum, then (d*da)*isum
        const __m256i exact = _mm256_sub_epi32(isum, _mm256_slli_epi32(sums, 5));
        return _mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(pb.d), da), _mm256_cvtepi32_ps(exact));
    }
}

// info: the batch's ActInfoK array (unused by Q6_K, which has none: then nullptr).
template <class T, int NT>
void tile(const MatmulArgs& m, const ActInfoK* info, const Panel<T>* panel, int64_t row0, int64_t token0,
          int64_t nBlocks) {
    const BlockQ8_K* a[NT];
    const ActInfoK* inf[NT];
    for (int t = 0; t < NT; ++t) {
        a[t] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(m.acts) +
                                                  static_cast<size_t>(token0 + t) * m.actRowBytes);
        inf[t] = T::kHasMins ? info + (token0 + t) * nBlocks : nullptr;
    }
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        __m256i isum[NT];
        superBlockSums<T, NT>(panel[b], a, isum);
        for (int t = 0; t < NT; ++t) {
            const int16_t* pairSource = T::kHasMins ? inf[t][b].pairSums : a[t]->bsums;
            acc[t] = _mm256_add_ps(acc[t], blockTerm<T>(panel[b], *a[t]++, pairSource, isum[t]));
        }
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(m.y + (token0 + t) * m.yStride + row0, acc[t]);
}

// As tile, with the AVX-VNNI sums (the same integers, the same float terms).
template <class T, int NT>
HEARTH_AVX_VNNI void tileVnni(const MatmulArgs& m, const ActInfoK* info, const Panel<T>* panel, int64_t row0,
                              int64_t token0, int64_t nBlocks) {
    const BlockQ8_K* a[NT];
    const ActInfoK* inf[NT];
    for (int t = 0; t < NT; ++t) {
        a[t] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(m.acts) +
                                                  static_cast<size_t>(token0 + t) * m.actRowBytes);
        inf[t] = T::kHasMins ? info + (token0 + t) * nBlocks : nullptr;
    }
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        __m256i isum[NT];
        superBlockSumsVnni<T, NT>(panel[b], a, isum);
        for (int t = 0; t < NT; ++t) {
            const int16_t* pairSource = T::kHasMins ? inf[t][b].pairSums : a[t]->bsums;
            acc[t] = _mm256_add_ps(acc[t], blockTerm<T>(panel[b], *a[t]++, pairSource, isum[t]));
        }
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(m.y + (token0 + t) * m.yStride + row0, acc[t]);
}

template <class T>
HEARTH_AVX_VNNI void tilesVnni(const MatmulArgs& m, const ActInfoK* info, const Panel<T>* panel, int64_t row0,
                               int64_t nBlocks) {
    int64_t t = 0;
    for (; t + 4 <= m.nTokens; t += 4) tileVnni<T, 4>(m, info, panel, row0, t, nBlocks);
    switch (m.nTokens - t) {
    case 3: return tileVnni<T, 3>(m, info, panel, row0, t, nBlocks);
    case 2: return tileVnni<T, 2>(m, info, panel, row0, t, nBlocks);
    case 1: return tileVnni<T, 1>(m, info, panel, row0, t, nBlocks);
    default: return;
    }
}

template <class T>
void panelRows(const MatmulArgs& m, const ActInfoK* info, int64_t row0, void* scratch) {
    const int64_t nBlocks = m.nCols / kQKK;
    auto* panel = static_cast<Panel<T>*>(scratch);
    packPanel<T>(m, row0, nBlocks, panel);
    if (m.avxVnni) return tilesVnni<T>(m, info, panel, row0, nBlocks);
    int64_t t = 0;
    for (; t + 4 <= m.nTokens; t += 4) tile<T, 4>(m, info, panel, row0, t, nBlocks);
    switch (m.nTokens - t) {
    case 3: return tile<T, 3>(m, info, panel, row0, t, nBlocks);
    case 2: return tile<T, 2>(m, info, panel, row0, t, nBlocks);
    case 1: return tile<T, 1>(m, info, panel, row0, t, nBlocks);
    default: return;
    }
}

}  // namespace

size_t gemmPanelBytesK(int64_t nCols) { return static_cast<size_t>(nCols / kQKK) * sizeof(PanelBlock<16>); }

size_t gemmActInfoBytesK(DType wType, int64_t nCols) {
    return wType == DType::Q4_K || wType == DType::Q5_K ? static_cast<size_t>(nCols / kQKK) * sizeof(ActInfoK) : 0;
}

void gemmActInfoK(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    if (gemmActInfoBytesK(m.wType, m.nCols) == 0) return;
    const int64_t nBlocks = m.nCols / kQKK;
    auto* out = static_cast<ActInfoK*>(info);
    for (int64_t t = tokenBegin; t < tokenEnd; ++t) {
        const auto* a = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(m.acts) +
                                                           static_cast<size_t>(t) * m.actRowBytes);
        for (int64_t b = 0; b < nBlocks; ++b) {
            const __m256i bsums = load256(a[b].bsums);
            const __m128i sums = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out[t * nBlocks + b].pairSums), sums);
        }
    }
}

void gemmPanelK(const MatmulArgs& m, const void* actInfo, int64_t row0, void* scratch) {
    const auto* info = static_cast<const ActInfoK*>(actInfo);
    switch (m.wType) {
    case DType::Q4_K: return panelRows<TQ4_K>(m, info, row0, scratch);
    case DType::Q5_K: return panelRows<TQ5_K>(m, info, row0, scratch);
    case DType::Q6_K: return panelRows<TQ6_K>(m, info, row0, scratch);
    default: return;
    }
}

}  // namespace hearth::avx2
