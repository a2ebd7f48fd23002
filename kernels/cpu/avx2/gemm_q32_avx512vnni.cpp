// The AVX-512 VNNI build of the repacked 32-block decode tiles (gemmPackedRows for Q4_0, Q4_1,
// Q5_0, Q5_1 and Q8_0): two packed groups of 8 rows side by side in a ZMM register (lanes 0-7 group g,
// 8-15 group g + 1), so that one vpdpbusd serves 16 rows and a block's float term is one
// instruction for 16 values. The AVX-VNNI build's integer sums and float expression lane for
// lane (gemm_q32_panels.h, addBlockTerm), so every value is bitwise the same. Built with
// -mavx512f/bw/vl/vnni and run only when cpuFeatures().canRunAvx512Vnni() and args.avxVnni
// (the activation info's offsets are the AVX-VNNI build's).
#include "kernels/cpu/avx2/gemm_q32_avx512vnni.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/avx2/gemm_q32_panels.h"

// GCC 12's avx512fintrin.h seeds the unmasked conversions and inserts (_mm512_cvtph_ps,
// _mm512_inserti64x4, ...) with an _mm512_undefined_* value that -Wmaybe-uninitialized
// reports at every use (a false positive: the unmasked forms never read it).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace hearth::avx2 {
namespace {

// One packed block of two groups: q[k] lanes 0-7 group g's panel vector k, 8-15 group g + 1's;
// w: Q8_0's signed values (q holds their magnitudes).
struct Regs16 {
    __m512i q[8];
    __m512i w[8];
    __m512 d, m;
};

inline __m512i join256(const uint8_t* lo, const uint8_t* hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(load256(lo)), load256(hi), 1);
}
inline __m256i join128(const uint8_t* lo, const uint8_t* hi) {
    return _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(hi)),
                            _mm_loadu_si128(reinterpret_cast<const __m128i*>(lo)));
}

template <class T>
inline void unpack16(const uint8_t* o0, const uint8_t* o1, Regs16& pr) {
    pr.d = _mm512_cvtph_ps(join128(o0, o1));
    if constexpr (T::kHasMin) pr.m = _mm512_cvtph_ps(join128(o0 + 16, o1 + 16));
    const uint8_t* q0 = o0 + Packed<T>::kScaleBytes;
    const uint8_t* q1 = o1 + Packed<T>::kScaleBytes;
    if constexpr (T::kSigned) {
        for (int k = 0; k < 8; ++k) {
            pr.w[k] = join256(q0 + 32 * k, q1 + 32 * k);
            pr.q[k] = _mm512_abs_epi8(pr.w[k]);  // as vpsignb(w, w): -128 stays 0x80 (128 unsigned)
        }
    } else {
        const __m512i mask = _mm512_set1_epi8(0x0f);
        for (int j = 0; j < 4; ++j) {
            const __m512i v = join256(q0 + 32 * j, q1 + 32 * j);
            pr.q[j] = _mm512_and_si512(v, mask);
            pr.q[j + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
        }
        if constexpr (T::kFifthBits) {
            // Q5_x: byte r of quad j holds row r's fifth bits of vectors j (low half) and j + 4
            // (high half). Each row's byte goes to its lane's four bytes, then bit i (or 4 + i)
            // of byte i sets 0x10 there, as the AVX-VNNI build's unpackPacked.
            const __m512i spread =
                _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12));
            const __m512i lowBits = _mm512_set1_epi32(0x08040201),
                          highBits = _mm512_set1_epi32(static_cast<int>(0x80402010u));
            for (int j = 0; j < 4; ++j) {
                long long lo, hi;
                std::memcpy(&lo, q0 + 128 + 8 * j, 8);
                std::memcpy(&hi, q1 + 128 + 8 * j, 8);
                const __m512i bytes = _mm512_shuffle_epi8(_mm512_cvtepu8_epi32(_mm_set_epi64x(hi, lo)), spread);
                pr.q[j] = _mm512_or_si512(pr.q[j], _mm512_maskz_set1_epi8(_mm512_test_epi8_mask(bytes, lowBits), 0x10));
                pr.q[j + 4] =
                    _mm512_or_si512(pr.q[j + 4], _mm512_maskz_set1_epi8(_mm512_test_epi8_mask(bytes, highBits), 0x10));
            }
        }
    }
}

// NT tokens (blocks a[b * stride + t]) against groups row0 / 8 and row0 / 8 + 1 (or the first
// alone, twice, when it is the range's last): y rows [row0, rowEnd) of them.
template <class T, int NT>
void packedTile16(const MatmulArgs& m, const ActBlock* a, int64_t stride, int64_t row0, int64_t rowEnd, int64_t token0,
                  int64_t nBlocks) {
    const int64_t g = row0 / kPanelRows;
    const auto* base = static_cast<const uint8_t*>(m.packed);
    const uint8_t* p0 = base + static_cast<size_t>(g * nBlocks) * Packed<T>::kBytes;
    const uint8_t* p1 = rowEnd - row0 > kPanelRows ? p0 + static_cast<size_t>(nBlocks) * Packed<T>::kBytes : p0;
    __m512 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    // The next tile's two groups follow this tile's in memory: near the end, the prefetches run
    // on into them (group g + 2 for p0's stream, g + 3 for p1's).
    const uint8_t* next = p0 + 2 * static_cast<size_t>(nBlocks) * Packed<T>::kBytes;
    for (int64_t b = 0; b < nBlocks; ++b, a += stride) {
        const int64_t f = b + kAheadBlocks<T>;
        prefetchBlock<T>(f < nBlocks ? p0 + static_cast<size_t>(f) * Packed<T>::kBytes
                                     : next + static_cast<size_t>(f - nBlocks) * Packed<T>::kBytes);
        prefetchBlock<T>(f < nBlocks ? p1 + static_cast<size_t>(f) * Packed<T>::kBytes
                                     : next + static_cast<size_t>(f) * Packed<T>::kBytes);
        Regs16 pr;
        unpack16<T>(p0 + static_cast<size_t>(b) * Packed<T>::kBytes, p1 + static_cast<size_t>(b) * Packed<T>::kBytes,
                    pr);
        __m512i sum[NT];
        for (int t = 0; t < NT; ++t)
            sum[t] = T::kOffset != 0 ? _mm512_set1_epi32(static_cast<int>(a[t].offsets)) : _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
            __mmask64 negative = 0;
            if constexpr (T::kSigned) negative = _mm512_movepi8_mask(pr.w[k]);
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t) {
                int word;
                std::memcpy(&word, a[t].q + 4 * k, 4);
                __m512i acts = _mm512_set1_epi32(word);
                // sign(a, w) as vpsignb: negated where w < 0 (where w = 0 the magnitude is 0).
                if constexpr (T::kSigned) acts = _mm512_mask_sub_epi8(acts, negative, _mm512_setzero_si512(), acts);
                sum[t] = _mm512_dpbusd_epi32(sum[t], pr.q[k], acts);
            }
        }
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) {
            const __m512 scaled =
                _mm512_mul_ps(_mm512_mul_ps(pr.d, _mm512_set1_ps(a[t].d)), _mm512_cvtepi32_ps(sum[t]));
            if constexpr (T::kHasMin)
                acc[t] = _mm512_add_ps(acc[t], _mm512_add_ps(scaled, _mm512_mul_ps(pr.m, _mm512_set1_ps(a[t].s))));
            else acc[t] = _mm512_add_ps(acc[t], scaled);
        }
    }
    const int64_t n = std::min<int64_t>(rowEnd - row0, 2 * kPanelRows);
    for (int t = 0; t < NT; ++t) {
        float* y = m.y + (token0 + t) * m.yStride + row0;
        if (n == 2 * kPanelRows) {
            _mm512_storeu_ps(y, acc[t]);
        } else {
            alignas(64) float lanes[16];
            _mm512_store_ps(lanes, acc[t]);
            for (int64_t r = 0; r < n; ++r) y[r] = lanes[r];
        }
    }
}

// Rows outer, token groups inner: a tile's 16 rows are read from memory once and stay in the
// core's caches for every group of tokens (a batch, a prefill chunk), while the activations,
// far smaller than the weights, are what is read again.
template <class T>
void packedRows16(const MatmulArgs& m, const ActBlock* info, int64_t rowBegin, int64_t rowEnd) {
    const int64_t nBlocks = m.nCols / kQK;
    for (int64_t row0 = rowBegin; row0 < rowEnd; row0 += 2 * kPanelRows) {
        for (int64_t g = 0; g < m.nTokens; g += kTileTokens) {
            const GroupSpan span = groupSpan(g, m.nTokens, nBlocks);
            const ActBlock* group = info + span.first;
            switch (span.stride) {
            case 1: packedTile16<T, 1>(m, group, 1, row0, rowEnd, g, nBlocks); break;
            case 2: packedTile16<T, 2>(m, group, 2, row0, rowEnd, g, nBlocks); break;
            case 3: packedTile16<T, 3>(m, group, 3, row0, rowEnd, g, nBlocks); break;
            case 4: packedTile16<T, 4>(m, group, 4, row0, rowEnd, g, nBlocks); break;
            case 5: packedTile16<T, 5>(m, group, 5, row0, rowEnd, g, nBlocks); break;
            default: packedTile16<T, kTileTokens>(m, group, kTileTokens, row0, rowEnd, g, nBlocks); break;
            }
        }
    }
}

}  // namespace

bool packedRowsQ32Avx512VnniHandles(DType w) {
    return w == DType::Q4_0 || w == DType::Q4_1 || w == DType::Q5_0 || w == DType::Q5_1 || w == DType::Q8_0;
}

void gemmPackedRowsQ32Avx512Vnni(const MatmulArgs& m, const void* actInfo, int64_t rowBegin, int64_t rowEnd) {
    const auto* info = static_cast<const ActBlock*>(actInfo);
    switch (m.wType) {
    case DType::Q4_0: return packedRows16<TQ4_0>(m, info, rowBegin, rowEnd);
    case DType::Q4_1: return packedRows16<TQ4_1>(m, info, rowBegin, rowEnd);
    case DType::Q5_0: return packedRows16<TQ5_0>(m, info, rowBegin, rowEnd);
    case DType::Q5_1: return packedRows16<TQ5_1>(m, info, rowBegin, rowEnd);
    case DType::Q8_0: return packedRows16<TQ8_0>(m, info, rowBegin, rowEnd);
    default: return;
    }
}

}  // namespace hearth::avx2
