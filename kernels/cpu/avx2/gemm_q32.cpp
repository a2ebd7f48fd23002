// The AVX2 policy of the 32-block prefill gemm (gemm_q32_panels.h holds the algorithm): block
// sums with maddubs/madd. kernels.h's entry points, which hand over to the AVX-VNNI build of
// the same algorithm (gemm_q32_vnni.cpp) when MatmulArgs::avxVnni asks for it.
#include "kernels/cpu/avx2/gemm_q32_panels.h"
#include "kernels/cpu/avx2/gemm_q32_avx512vnni.h"
#include "kernels/cpu/avx2/gemm_q32_vnni.h"

namespace hearth::avx2 {
namespace {

// Unsigned values u (Q4: 0..15, Q5: 0..31) with weight value u - kOffset, against signed
// activations a (|a| <= 127): maddubs pairs are at most 2·31·127 = 7936, never saturated.
// int16 adds wrap, so a sum of them is exact whenever its true value fits in int16, however
// large the partial sums: Q4_0/Q5_0 start each lane's two int16 halves at -kOffset·Σa (the
// activations that half meets), so they end at Σ(u - kOffset)·a over 16 values, at most
// 16·16·127 = 32512, and one madd widens the block to int32. Q4_1 sums Σu·a over 16 values
// (<= 30480) directly; Q5_1 (<= 62992) widens every kGroup = 4 products. Q8_0's signed values:
// |w|·sign(a, w) per pair (exact while no activation is -128, as dotS8).
struct DotAvx2 {
    // Token by token: the panel's vectors are reloaded from L1 for each token (loads are
    // cheap) so that few vectors are live and the tile's accumulators stay in registers.
    template <class T, int NT, class PB>
    static void addBlock(const PB& pb, const ActBlock* a, __m256* acc) {
        const __m256 dw = panelD(pb);
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) addBlockTerm<T>(acc[t], dw, pb, a[t], blockSum<T>(pb, a[t]));
    }

    template <class T, class PB>
    static __m256i blockSum(const PB& pb, const ActBlock& a) {
        const __m256i ones = _mm256_set1_epi16(1);
        __m256i sum = _mm256_setzero_si256();
        __m256i part = T::kOffset != 0 ? _mm256_set1_epi32(static_cast<int>(a.offsets)) : _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
            if constexpr (T::kSigned) {
                const __m256i prod =
                    _mm256_maddubs_epi16(panelQ(pb, k), _mm256_sign_epi8(broadcast4(a.q + 4 * k), panelW(pb, k)));
                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(prod, ones));
            } else {
                const __m256i prod = _mm256_maddubs_epi16(panelQ(pb, k), broadcast4(a.q + 4 * k));
                part = k % T::kGroup == 0 && T::kOffset == 0 ? prod : _mm256_add_epi16(part, prod);
                if (k % T::kGroup == T::kGroup - 1) {
                    const __m256i wide = _mm256_madd_epi16(part, ones);
                    sum = k < T::kGroup ? wide : _mm256_add_epi32(sum, wide);
                }
            }
        }
        return sum;
    }

    // One repacked block (gemm_q32_panels.h, Packed) for NT tokens (1 or 2), unpacked as the
    // sums need each vector rather than all eight first, each vector serving every token before
    // the next: Q4_x takes its four stored vectors one at a time, low nibbles then high (k = j,
    // then j + 4; the sums are exact in any order), so that one vector is live, not eight.
    // Unpacked first and summed token by token (addBlock), two tokens kept the eight vectors
    // live, and with sixteen YMM registers GCC spilled the accumulators to the stack, whose
    // store-and-reload chain then set the pace; from three tokens on addBlock's order measured
    // faster (gemm_q32_bench: the vectors are reused from registers across more tokens). Q5_x
    // (fifth bits) keeps unpackPacked. Same integer sums and float terms as addBlock.
    static constexpr bool kUnpacksLazily = true;
    template <class T, int NT>
    static void addPackedBlock(const uint8_t* o, const ActBlock* a, __m256* acc) {
        static_assert(!T::kFifthBits);
        const __m256i ones = _mm256_set1_epi16(1);
        const uint8_t* qs = o + Packed<T>::kScaleBytes;
        __m256i sum[NT], part[NT];
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) {
            sum[t] = _mm256_setzero_si256();
            part[t] = T::kOffset != 0 ? _mm256_set1_epi32(static_cast<int>(a[t].offsets)) : _mm256_setzero_si256();
        }
        if constexpr (T::kSigned) {  // Q8_0: vector k holds values 4k..4k+3 of each row, signed
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k) {
                const __m256i w = load256(qs + 32 * k), q = _mm256_sign_epi8(w, w);
#pragma GCC unroll 8
                for (int t = 0; t < NT; ++t) {
                    const __m256i prod = _mm256_maddubs_epi16(q, _mm256_sign_epi8(broadcast4(a[t].q + 4 * k), w));
                    sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(prod, ones));
                }
            }
        } else {
            static_assert(T::kGroup == 8);  // one int16 sum over the block, widened once
            const __m256i mask = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) {
                const __m256i v = load256(qs + 32 * j);
                const __m256i halves[2] = {_mm256_and_si256(v, mask), _mm256_and_si256(_mm256_srli_epi16(v, 4), mask)};
#pragma GCC unroll 2
                for (int h = 0; h < 2; ++h) {
                    const int k = j + 4 * h;
#pragma GCC unroll 8
                    for (int t = 0; t < NT; ++t) {
                        const __m256i prod = _mm256_maddubs_epi16(halves[h], broadcast4(a[t].q + 4 * k));
                        part[t] = j == 0 && h == 0 && T::kOffset == 0 ? prod : _mm256_add_epi16(part[t], prod);
                    }
                }
            }
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t) sum[t] = _mm256_madd_epi16(part[t], ones);
        }
        PanelRegs pr;  // the scales only (addBlockTerm reads d and m)
        pr.d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o)));
        pr.m = T::kHasMin ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 16))) : pr.d;
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) addBlockTerm<T>(acc[t], pr.d, pr, a[t], sum[t]);
    }

    // Per 32-bit lane, [-offset·Σ of the activations its low int16 meets, the same for its
    // high int16]: maddubs pairs (4k, 4k+1) land in the low half, (4k+2, 4k+3) in the high half.
    template <class T>
    static uint32_t offsets(__m256i q) {
        if constexpr (T::kOffset == 0) return 0;
        const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q);  // 16 pair sums, |.| <= 254
        __m128i s = _mm_add_epi16(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
        s = _mm_add_epi16(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
        s = _mm_add_epi16(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));  // |Σ| <= 16·127
        s = _mm_mullo_epi16(s, _mm_set1_epi16(static_cast<short>(-T::kOffset)));  // |.| <= 32512
        return static_cast<uint32_t>(_mm_cvtsi128_si32(s));
    }
};

}  // namespace

size_t gemmPanelBytesQ32(int64_t nCols) { return static_cast<size_t>(nCols / kQK) * sizeof(PanelBlock); }

size_t gemmActInfoBytesQ32(int64_t nCols) { return static_cast<size_t>(nCols / kQK) * sizeof(ActBlock); }

void gemmActInfoQ32(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    if (m.avxVnni)
        return m.vnniEvex ? gemmActInfoQ32VnniEvex(m, tokenBegin, tokenEnd, info)
                          : gemmActInfoQ32Vnni(m, tokenBegin, tokenEnd, info);
    gemmActInfoWith<DotAvx2>(m, tokenBegin, tokenEnd, info);
}

void gemmPanelQ32(const MatmulArgs& m, const void* actInfo, int64_t row0, void* scratch) {
    if (m.avxVnni)
        return m.vnniEvex ? gemmPanelQ32VnniEvex(m, actInfo, row0, scratch) : gemmPanelQ32Vnni(m, actInfo, row0, scratch);
    gemmPanelWith<DotAvx2>(m, actInfo, row0, scratch);
}

void gemmPackedRowsQ32(const MatmulArgs& m, const void* actInfo, int64_t rowBegin, int64_t rowEnd) {
    if (m.avxVnni && m.avx512Vnni && packedRowsQ32Avx512VnniHandles(m.wType))
        return gemmPackedRowsQ32Avx512Vnni(m, actInfo, rowBegin, rowEnd);
    if (m.avxVnni)
        return m.vnniEvex ? gemmPackedRowsQ32VnniEvex(m, actInfo, rowBegin, rowEnd)
                          : gemmPackedRowsQ32Vnni(m, actInfo, rowBegin, rowEnd);
    gemmPackedRowsWith<DotAvx2>(m, actInfo, rowBegin, rowEnd);
}

size_t packedBytesQ32(DType w, int64_t nRows, int64_t nCols) {
    const auto bytes = [&](size_t blockBytes) {
        return static_cast<size_t>((nRows + kPanelRows - 1) / kPanelRows * (nCols / kQK)) * blockBytes;
    };
    switch (w) {
    case DType::Q4_0: return bytes(Packed<TQ4_0>::kBytes);
    case DType::Q4_1: return bytes(Packed<TQ4_1>::kBytes);
    case DType::Q5_0: return bytes(Packed<TQ5_0>::kBytes);
    case DType::Q5_1: return bytes(Packed<TQ5_1>::kBytes);
    case DType::Q8_0: return bytes(Packed<TQ8_0>::kBytes);
    default: return 0;
    }
}

void unpackRowQ32(DType w, const void* packed, int64_t nCols, int64_t row, void* out) {
    const auto* src = static_cast<const uint8_t*>(packed);
    auto* dst = static_cast<uint8_t*>(out);
    const int64_t nBlocks = nCols / kQK;
    switch (w) {
    case DType::Q4_0: return unpackRow<TQ4_0>(src, nBlocks, row, dst);
    case DType::Q4_1: return unpackRow<TQ4_1>(src, nBlocks, row, dst);
    case DType::Q5_0: return unpackRow<TQ5_0>(src, nBlocks, row, dst);
    case DType::Q5_1: return unpackRow<TQ5_1>(src, nBlocks, row, dst);
    case DType::Q8_0: return unpackRow<TQ8_0>(src, nBlocks, row, dst);
    default: return;
    }
}

void packRowsQ32(DType w, const void* rows, int64_t nRows, int64_t nCols, int64_t groupBegin, int64_t groupEnd,
                 void* packed) {
    const auto* src = static_cast<const uint8_t*>(rows);
    auto* out = static_cast<uint8_t*>(packed);
    const size_t rowSize = rowBytes(w, nCols);
    const int64_t nBlocks = nCols / kQK;
    for (int64_t g = groupBegin; g < groupEnd; ++g) {
        switch (w) {
        case DType::Q4_0: packGroup<TQ4_0>(src, rowSize, nRows, nBlocks, g, out); break;
        case DType::Q4_1: packGroup<TQ4_1>(src, rowSize, nRows, nBlocks, g, out); break;
        case DType::Q5_0: packGroup<TQ5_0>(src, rowSize, nRows, nBlocks, g, out); break;
        case DType::Q5_1: packGroup<TQ5_1>(src, rowSize, nRows, nBlocks, g, out); break;
        case DType::Q8_0: packGroup<TQ8_0>(src, rowSize, nRows, nBlocks, g, out); break;
        default: return;
        }
    }
}

}  // namespace hearth::avx2
