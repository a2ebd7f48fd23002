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
// Also the weights repacked at load (packRowsK, "Weights repacked" below): the panels built
// from the packed copy, and the decode tiles that read it in registers. Measured in cache, one
// thread, 512x2048, 1 token, against dot_kquants.cpp's tiles on the file's rows (27.0, 21.8,
// 24.2 GMAC/s): Q4_K 78.8 (AVX2) / 78.2 (AVX-VNNI), Q5_K 50.0 / 53.4, Q6_K 44.2 / 44.5.
#include <cstring>
#include <type_traits>

#include "kernels/cpu/avx2/gemm_kquants_avx512vnni.h"
#include "kernels/cpu/avx2/gemm_kquants_packed.h"
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

// The AVX-VNNI variant (MatmulArgs::avxVnni without vnniEvex, only where
// cpuFeatures().canRunAvxVnni(); hosts with only AVX512_VNNI take the AVX2 tiles below 4 rows and
// the AVX-512 VNNI tiles from 4): these
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

// ---- Weights repacked at load (packRowsK) ----
//
// The rows in groups of kPanelRows (the last group padded with zero blocks), a group's
// super-blocks in order, each super-block of the 8 rows stored as what the panel needs before
// unpacking, so that decode reads one stream and unpacks it in registers with a few shifts:
//   Q4_K/Q5_K (TQ4_K::kP*): d and dmin of the 8 rows (f16, 16 bytes each); the sub-block scales
//     decoded from their 6 bits, 4 pairs of 16 bytes, byte 2r + i of pair p = scale 2p + i of
//     row r (unsigned), and the mins likewise; then 32 vectors of 32 bytes, vector v lane r =
//     qs[4v, 4v + 4) of row r: its low nibbles are panel vector 16(v / 8) + v % 8 (values
//     64(v / 8) + 4(v % 8) ..), its high nibbles the one 8 steps further; Q5_K then 8 vectors,
//     vector k lane r = qh[4k, 4k + 4) of row r (bit j of a byte: the fifth bit of chunk j).
//     1184 (Q4_K) and 1440 (Q5_K) bytes per 8 rows against the file's 1152 and 1408 (x1.028,
//     x1.023): the scales as bytes cost 32 more than their 6-bit form and save their unpacking
//     (three words of shifts and masks per row and super-block) on every token.
//   Q6_K (TQ6_K::kP*): 32 vectors of ql and 16 of qh, 4 bytes per row as above; the 16 scales
//     as 8 pairs of 16 bytes (signed), then d (f16), then 16 bytes of padding: 1696 bytes
//     against 1680 (x1.0095), every value vector 32-byte aligned.
// The 8 rows' scale pairs widen with one vpmovzxbw/vpmovsxbw to the madd operand of the min
// term (Q6_K: of its -32 correction), one shuffle gives a sub-block's scale twice per lane
// (the madd operand of the AVX2 sums), a shift or two gives it as an int32 (vpmulld of the
// AVX-VNNI sums). No horizontal sums: every lane is one row.

// Q4_K/Q5_K: the 6-bit scales and mins of a super-block (kquant_unpack.h, scalesMinsBytes).
inline void scalesMinsOf(const uint8_t* s, uint8_t* sc, uint8_t* mn) {
    for (int j = 0; j < 4; ++j) {
        sc[j] = s[j] & 63;
        mn[j] = s[j + 4] & 63;
        sc[j + 4] = static_cast<uint8_t>((s[j + 8] & 15) | ((s[j] >> 6) << 4));
        mn[j + 4] = static_cast<uint8_t>((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
    }
}

// scalesMinsOf's inverse: the 12 bytes from the 8 scales and 8 mins (6 bits each).
inline void scalesMinsBack(const uint8_t* sc, const uint8_t* mn, uint8_t* s) {
    for (int j = 0; j < 4; ++j) {
        s[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = static_cast<uint8_t>(mn[j] | ((mn[j + 4] >> 4) << 6));
        s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
    }
}

// Group g's super-blocks from the file's rows (rows beyond nRows as zero blocks).
template <class T>
void packGroupK(const uint8_t* rows, size_t rowBytes, int64_t nRows, int64_t nBlocks, int64_t g, uint8_t* out) {
    using W = typename T::W;
    static const W kZero{};
    const W* src[kPanelRows];
    for (int r = 0; r < kPanelRows; ++r) {
        const int64_t row = g * kPanelRows + r;
        src[r] = row < nRows ? reinterpret_cast<const W*>(rows + static_cast<size_t>(row) * rowBytes) : nullptr;
    }
    for (int64_t b = 0; b < nBlocks; ++b) {
        uint8_t* o = out + static_cast<size_t>(g * nBlocks + b) * T::kPackedBytes;
        std::memset(o, 0, T::kPackedBytes);
        for (int r = 0; r < kPanelRows; ++r) {
            const W& w = src[r] ? src[r][b] : kZero;
            std::memcpy(o + T::kPD + 2 * r, &w.d, 2);
            if constexpr (T::kHasMins) {
                std::memcpy(o + T::kPDmin + 2 * r, &w.dmin, 2);
                uint8_t sc[8], mn[8];
                scalesMinsOf(w.scales, sc, mn);
                for (int i = 0; i < 8; ++i) {
                    o[T::kPScales + 16 * (i / 2) + 2 * r + i % 2] = sc[i];
                    o[T::kPMins + 16 * (i / 2) + 2 * r + i % 2] = mn[i];
                }
                for (int v = 0; v < 32; ++v) std::memcpy(o + T::kPQs + 32 * v + 4 * r, w.qs + 4 * v, 4);
                if constexpr (T::kFifthBits)
                    for (int k = 0; k < 8; ++k) std::memcpy(o + T::kPQh + 32 * k + 4 * r, w.qh + 4 * k, 4);
            } else {
                for (int i = 0; i < 16; ++i)
                    std::memcpy(o + T::kPScales + 16 * (i / 2) + 2 * r + i % 2, &w.scales[i], 1);
                for (int v = 0; v < 32; ++v) std::memcpy(o + T::kPQl + 32 * v + 4 * r, w.ql + 4 * v, 4);
                for (int v = 0; v < 16; ++v) std::memcpy(o + T::kPQh + 32 * v + 4 * r, w.qh + 4 * v, 4);
            }
        }
    }
}

// Row `row`'s super-blocks back from its group (packGroupK's inverse).
template <class T>
void unpackGroupRowK(const uint8_t* packed, int64_t nBlocks, int64_t row, uint8_t* out) {
    using W = typename T::W;
    const int64_t g = row / kPanelRows;
    const int r = static_cast<int>(row % kPanelRows);
    for (int64_t b = 0; b < nBlocks; ++b) {
        const uint8_t* o = packed + static_cast<size_t>(g * nBlocks + b) * T::kPackedBytes;
        W w{};
        std::memcpy(&w.d, o + T::kPD + 2 * r, 2);
        if constexpr (T::kHasMins) {
            std::memcpy(&w.dmin, o + T::kPDmin + 2 * r, 2);
            uint8_t sc[8], mn[8];
            for (int i = 0; i < 8; ++i) {
                sc[i] = o[T::kPScales + 16 * (i / 2) + 2 * r + i % 2];
                mn[i] = o[T::kPMins + 16 * (i / 2) + 2 * r + i % 2];
            }
            scalesMinsBack(sc, mn, w.scales);
            for (int v = 0; v < 32; ++v) std::memcpy(w.qs + 4 * v, o + T::kPQs + 32 * v + 4 * r, 4);
            if constexpr (T::kFifthBits)
                for (int k = 0; k < 8; ++k) std::memcpy(w.qh + 4 * k, o + T::kPQh + 32 * k + 4 * r, 4);
        } else {
            for (int i = 0; i < 16; ++i) std::memcpy(&w.scales[i], o + T::kPScales + 16 * (i / 2) + 2 * r + i % 2, 1);
            for (int v = 0; v < 32; ++v) std::memcpy(w.ql + 4 * v, o + T::kPQl + 32 * v + 4 * r, 4);
            for (int v = 0; v < 16; ++v) std::memcpy(w.qh + 4 * v, o + T::kPQh + 32 * v + 4 * r, 4);
        }
        std::memcpy(out + static_cast<size_t>(b) * sizeof(W), &w, sizeof(W));
    }
}

// Bits n.. of each byte moved to bits 4.. (the 16-bit shifts move no kept bit across bytes:
// the caller masks bits 4..(4 + width) only).
inline __m256i bitsTo4(__m256i v, int n) {
    if (n < 4) return _mm256_slli_epi16(v, 4 - n);
    return n > 4 ? _mm256_srli_epi16(v, n - 4) : v;
}

// Panel vector 8j + s (values 32j + 4s .. + 3 of the 8 rows, unsigned: Q6_K's u = value + 32)
// of the packed super-block at o. j and s are constants once the callers' loops are unrolled.
template <class T>
inline __m256i packedValues(const uint8_t* o, int j, int s) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    if constexpr (T::kHasMins) {
        const __m256i v = load256(o + T::kPQs + 32 * (8 * (j / 2) + s));
        __m256i u = _mm256_and_si256(j % 2 ? _mm256_srli_epi16(v, 4) : v, low4);
        if constexpr (T::kFifthBits) {
            const __m256i high = bitsTo4(load256(o + T::kPQh + 32 * s), j);
            u = _mm256_or_si256(u, _mm256_and_si256(high, _mm256_set1_epi8(0x10)));
        }
        return u;
    } else {
        const int half = j / 4, k = j % 4;
        const __m256i ql = load256(o + T::kPQl + 32 * (16 * half + 8 * (k % 2) + s));
        const __m256i low = _mm256_and_si256(k < 2 ? ql : _mm256_srli_epi16(ql, 4), low4);
        const __m256i high = bitsTo4(load256(o + T::kPQh + 32 * (8 * half + s)), 2 * k);
        return _mm256_or_si256(low, _mm256_and_si256(high, _mm256_set1_epi8(0x30)));
    }
}

// Pair p of the packed scales: lane r = (scale 2p, scale 2p + 1) of row r as int16.
template <class T>
inline __m256i scalePairs(const uint8_t* o, int p) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(o + T::kPScales + 16 * p));
    return T::kHasMins ? _mm256_cvtepu8_epi16(bytes) : _mm256_cvtepi8_epi16(bytes);
}

// Q4_K/Q5_K: lane r = (min 2p, min 2p + 1) of row r as int16 (PanelBlock::pair).
template <class T>
inline __m256i minPairs(const uint8_t* o, int p) {
    if constexpr (T::kHasMins)
        return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + T::kPMins + 16 * p)));
    else return scalePairs<T>(o, p);  // Q6_K: the pair operand of its correction is the scales'
}

// Scale 2p + odd of each row twice, as both int16 halves of its lane (PanelBlock::scale).
inline __m256i scaleTwice(__m256i pairs, int odd) {
    const __m256i even = _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4, 5, 4, 5, 8,
                                          9, 8, 9, 12, 13, 12, 13);
    const __m256i odds = _mm256_setr_epi8(2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15, 2, 3, 2, 3, 6, 7, 6,
                                          7, 10, 11, 10, 11, 14, 15, 14, 15);
    return _mm256_shuffle_epi8(pairs, odd ? odds : even);
}

// Scale 2p + odd of each row as a sign-extended int32.
inline __m256i scaleWide(__m256i pairs, int odd) {
    return odd ? _mm256_srai_epi32(pairs, 16) : _mm256_srai_epi32(_mm256_slli_epi32(pairs, 16), 16);
}

// The panel of rows [row0, row0 + 8) from the packed weights (prefill of repacked weights):
// the same PanelBlock as packPanel builds from the file's rows.
template <class T>
void panelFromPackedK(const MatmulArgs& m, int64_t row0, int64_t nBlocks, Panel<T>* panel) {
    const auto* base =
        static_cast<const uint8_t*>(m.packed) + static_cast<size_t>(row0 / kPanelRows * nBlocks) * T::kPackedBytes;
    for (int64_t b = 0; b < nBlocks; ++b) {
        const uint8_t* o = base + static_cast<size_t>(b) * T::kPackedBytes;
        Panel<T>& pb = panel[b];
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j)
#pragma GCC unroll 8
            for (int s = 0; s < 8; ++s) store32(pb.q[8 * j + s], packedValues<T>(o, j, s));
#pragma GCC unroll 8
        for (int p = 0; p < T::kScales / 2; ++p) {
            const __m256i pairs = scalePairs<T>(o, p);
            store32(pb.scale[2 * p], scaleTwice(pairs, 0));
            store32(pb.scale[2 * p + 1], scaleTwice(pairs, 1));
            store32(pb.pair[p], T::kHasMins ? minPairs<T>(o, p) : pairs);  // Q4_K/Q5_K: mins; Q6_K: scales
        }
        _mm256_store_ps(pb.d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + T::kPD))));
        if constexpr (T::kHasMins)
            _mm256_store_ps(pb.dmin, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + T::kPDmin))));
        else _mm256_store_ps(pb.dmin, _mm256_setzero_ps());
    }
}

// The reference's float term of one packed super-block for the 8 rows of one token: as
// blockTerm, with d, dmin and the pair operands read from the packed bytes.
template <class T>
inline __m256 packedBlockTerm(const uint8_t* o, const BlockQ8_K& a, const int16_t* pairSource, __m256i isum) {
    const __m256 da = _mm256_broadcast_ss(&a.d);
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + T::kPD)));
    __m256i sums = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int p = 0; p < T::kScales / 2; ++p) {
        const __m256i pairs = minPairs<T>(o, p);
        sums = _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, broadcast4(pairSource + 2 * p)));
    }
    if constexpr (T::kHasMins) {  // (d*da)*isum - (dmin*da)*msum
        const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + T::kPDmin)));
        const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(d, da), _mm256_cvtepi32_ps(isum));
        const __m256 offset = _mm256_mul_ps(_mm256_mul_ps(dmin, da), _mm256_cvtepi32_ps(sums));
        return _mm256_sub_ps(scaled, offset);
    } else {  // u = value + 32: isum - 32·Σ scale·bsum, then (d*da)*isum
        const __m256i exact = _mm256_sub_epi32(isum, _mm256_slli_epi32(sums, 5));
        return _mm256_mul_ps(_mm256_mul_ps(d, da), _mm256_cvtepi32_ps(exact));
    }
}

// Stores the 8 rows' values of one token (only those below rowEnd: the last group's padding
// is not stored).
inline void storeRows(float* y, __m256 v, int64_t nRows) {
    if (nRows >= kPanelRows) return _mm256_storeu_ps(y, v);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, v);
    for (int64_t r = 0; r < nRows; ++r) y[r] = lanes[r];
}

// The activations of NT tokens from token0 (their Q8_K rows and, for Q4_K/Q5_K, their pair sums).
template <class T, int NT>
struct PackedActs {
    const BlockQ8_K* a[NT];
    const ActInfoK* inf[NT];
    PackedActs(const MatmulArgs& m, const ActInfoK* info, int64_t token0, int64_t nBlocks) {
        for (int t = 0; t < NT; ++t) {
            a[t] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(m.acts) +
                                                      static_cast<size_t>(token0 + t) * m.actRowBytes);
            inf[t] = T::kHasMins ? info + (token0 + t) * nBlocks : nullptr;
        }
    }
    const int16_t* pairSource(int t, int64_t b) const { return T::kHasMins ? inf[t][b].pairSums : a[t][b].bsums; }
};

// NT tokens against the packed group of rows [row0, row0 + 8), each super-block unpacked in
// registers, AVX2 sums: the int16 sums of kGroup maddubs, then one madd with the sub-block's
// scale twice per lane into isum, one row per lane (the integers of groupSums). Decode and
// small batches of repacked weights.
template <class T, int NT>
void packedTile(const MatmulArgs& m, const ActInfoK* info, int64_t row0, int64_t rowEnd, int64_t token0,
                int64_t nBlocks) {
    const auto* base =
        static_cast<const uint8_t*>(m.packed) + static_cast<size_t>(row0 / kPanelRows * nBlocks) * T::kPackedBytes;
    const PackedActs<T, NT> acts(m, info, token0, nBlocks);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        const uint8_t* o = base + static_cast<size_t>(b) * T::kPackedBytes;
        const uint8_t* far = o + kAheadSuperBlocks<T> * T::kPackedBytes;
        __m256i isum[NT];
        for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 16
        for (int g = 0; g < T::kScales; ++g) {
            prefetchShare<T>(far, g);
            const __m256i scale = scaleTwice(scalePairs<T>(o, g / 2), g % 2);
#pragma GCC unroll 2
            for (int s0 = g * T::kStepsPerScale; s0 < (g + 1) * T::kStepsPerScale; s0 += T::kGroup) {
                __m256i part[NT];
#pragma GCC unroll 8
                for (int k = 0; k < T::kGroup; ++k) {
                    const int s = s0 + k;
                    const __m256i w = packedValues<T>(o, s / 8, s % 8);
#pragma GCC unroll 4
                    for (int t = 0; t < NT; ++t) {
                        const __m256i prod = _mm256_maddubs_epi16(w, broadcast4(acts.a[t][b].qs + 4 * s));
                        part[t] = k == 0 ? prod : _mm256_add_epi16(part[t], prod);
                        if (k % 2 == 1) keepChain(part[t]);
                    }
                }
#pragma GCC unroll 4
                for (int t = 0; t < NT; ++t) isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(part[t], scale));
            }
        }
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm256_add_ps(acc[t], packedBlockTerm<T>(o, acts.a[t][b], acts.pairSource(t, b), isum[t]));
    }
    for (int t = 0; t < NT; ++t) storeRows(m.y + (token0 + t) * m.yStride + row0, acc[t], rowEnd - row0);
}

// As packedTile with the AVX-VNNI sums (groupSumsVnni's integers): vpdpbusd per 4 bytes of 8
// rows in two chains, then the sub-block's sum times its scale (vpmulld).
template <class T, int NT>
HEARTH_AVX_VNNI void packedTileVnni(const MatmulArgs& m, const ActInfoK* info, int64_t row0, int64_t rowEnd,
                                    int64_t token0, int64_t nBlocks) {
    const auto* base =
        static_cast<const uint8_t*>(m.packed) + static_cast<size_t>(row0 / kPanelRows * nBlocks) * T::kPackedBytes;
    const PackedActs<T, NT> acts(m, info, token0, nBlocks);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        const uint8_t* o = base + static_cast<size_t>(b) * T::kPackedBytes;
        const uint8_t* far = o + kAheadSuperBlocks<T> * T::kPackedBytes;
        __m256i isum[NT];
        for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 16
        for (int g = 0; g < T::kScales; ++g) {
            prefetchShare<T>(far, g);
            __m256i even[NT], odd[NT];
            for (int t = 0; t < NT; ++t) even[t] = odd[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int k = 0; k < T::kStepsPerScale; ++k) {
                const int s = g * T::kStepsPerScale + k;
                const __m256i w = packedValues<T>(o, s / 8, s % 8);
#pragma GCC unroll 4
                for (int t = 0; t < NT; ++t) {
                    __m256i& chain = k % 2 == 0 ? even[t] : odd[t];
                    chain = _mm256_dpbusd_avx_epi32(chain, w, broadcast4(acts.a[t][b].qs + 4 * s));
                }
            }
            const __m256i scale = scaleWide(scalePairs<T>(o, g / 2), g % 2);
#pragma GCC unroll 4
            for (int t = 0; t < NT; ++t)
                isum[t] = _mm256_add_epi32(isum[t], _mm256_mullo_epi32(_mm256_add_epi32(even[t], odd[t]), scale));
        }
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm256_add_ps(acc[t], packedBlockTerm<T>(o, acts.a[t][b], acts.pairSource(t, b), isum[t]));
    }
    for (int t = 0; t < NT; ++t) storeRows(m.y + (token0 + t) * m.yStride + row0, acc[t], rowEnd - row0);
}

// Rows [rowBegin, rowEnd) (rowBegin a multiple of 8) of every token from the packed weights:
// group by group, the tokens 4 at a time (the last 1 to 3 together).
template <class T>
void packedRowsK(const MatmulArgs& m, const ActInfoK* info, int64_t rowBegin, int64_t rowEnd) {
    const int64_t nBlocks = m.nCols / kQKK;
    for (int64_t row0 = rowBegin; row0 < rowEnd; row0 += kPanelRows) {
        for (int64_t t = 0; t < m.nTokens;) {
            const int64_t n = m.nTokens - t;
            if (m.avxVnni && !m.vnniEvex) {
                if (n >= 4) packedTileVnni<T, 4>(m, info, row0, rowEnd, t, nBlocks), t += 4;
                else if (n == 3) packedTileVnni<T, 3>(m, info, row0, rowEnd, t, nBlocks), t += 3;
                else if (n == 2) packedTileVnni<T, 2>(m, info, row0, rowEnd, t, nBlocks), t += 2;
                else packedTileVnni<T, 1>(m, info, row0, rowEnd, t, nBlocks), t += 1;
            } else {
                if (n >= 4) packedTile<T, 4>(m, info, row0, rowEnd, t, nBlocks), t += 4;
                else if (n == 3) packedTile<T, 3>(m, info, row0, rowEnd, t, nBlocks), t += 3;
                else if (n == 2) packedTile<T, 2>(m, info, row0, rowEnd, t, nBlocks), t += 2;
                else packedTile<T, 1>(m, info, row0, rowEnd, t, nBlocks), t += 1;
            }
        }
    }
}

template <class T>
void panelRows(const MatmulArgs& m, const ActInfoK* info, int64_t row0, void* scratch) {
    const int64_t nBlocks = m.nCols / kQKK;
    auto* panel = static_cast<Panel<T>*>(scratch);
    if (m.packed) panelFromPackedK<T>(m, row0, nBlocks, panel);
    else packPanel<T>(m, row0, nBlocks, panel);
    if (m.avxVnni && !m.vnniEvex) return tilesVnni<T>(m, info, panel, row0, nBlocks);
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

size_t packedBytesK(DType w, int64_t nRows, int64_t nCols) {
    const auto bytes = [&](size_t blockBytes) {
        return static_cast<size_t>((nRows + kPanelRows - 1) / kPanelRows * (nCols / kQKK)) * blockBytes;
    };
    switch (w) {
    case DType::Q4_K: return bytes(TQ4_K::kPackedBytes);
    case DType::Q5_K: return bytes(TQ5_K::kPackedBytes);
    case DType::Q6_K: return bytes(TQ6_K::kPackedBytes);
    default: return 0;
    }
}

void packRowsK(DType w, const void* rows, int64_t nRows, int64_t nCols, int64_t groupBegin, int64_t groupEnd,
               void* packed) {
    const auto* src = static_cast<const uint8_t*>(rows);
    auto* out = static_cast<uint8_t*>(packed);
    const size_t rowSize = rowBytes(w, nCols);
    const int64_t nBlocks = nCols / kQKK;
    for (int64_t g = groupBegin; g < groupEnd; ++g) {
        switch (w) {
        case DType::Q4_K: packGroupK<TQ4_K>(src, rowSize, nRows, nBlocks, g, out); break;
        case DType::Q5_K: packGroupK<TQ5_K>(src, rowSize, nRows, nBlocks, g, out); break;
        case DType::Q6_K: packGroupK<TQ6_K>(src, rowSize, nRows, nBlocks, g, out); break;
        default: return;
        }
    }
}

void unpackRowK(DType w, const void* packed, int64_t nCols, int64_t row, void* out) {
    const auto* src = static_cast<const uint8_t*>(packed);
    auto* dst = static_cast<uint8_t*>(out);
    const int64_t nBlocks = nCols / kQKK;
    switch (w) {
    case DType::Q4_K: return unpackGroupRowK<TQ4_K>(src, nBlocks, row, dst);
    case DType::Q5_K: return unpackGroupRowK<TQ5_K>(src, nBlocks, row, dst);
    case DType::Q6_K: return unpackGroupRowK<TQ6_K>(src, nBlocks, row, dst);
    default: return;
    }
}

void gemmPackedRowsK(const MatmulArgs& m, const void* actInfo, int64_t rowBegin, int64_t rowEnd) {
    if (m.avx512Vnni) return gemmPackedRowsKAvx512Vnni(m, actInfo, rowBegin, rowEnd);
    const auto* info = static_cast<const ActInfoK*>(actInfo);
    switch (m.wType) {
    case DType::Q4_K: return packedRowsK<TQ4_K>(m, info, rowBegin, rowEnd);
    case DType::Q5_K: return packedRowsK<TQ5_K>(m, info, rowBegin, rowEnd);
    case DType::Q6_K: return packedRowsK<TQ6_K>(m, info, rowBegin, rowEnd);
    default: return;
    }
}

}  // namespace hearth::avx2
