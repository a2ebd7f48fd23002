// The AVX-VNNI policy of the 32-block prefill gemm (gemm_q32_panels.h holds the algorithm):
// one vpdpbusd per 4 bytes of 8 rows instead of maddubs + add + madd. Built with -mavxvnni (and
// again for EVEX through gemm_q32_vnni_evex.cpp, vnni_encoding.h) and run only when
// cpuFeatures().canRunVnni() (avxVnniEnabled() in the backend).
#include "kernels/cpu/avx2/gemm_q32_vnni.h"

#include "kernels/cpu/avx2/gemm_q32_panels.h"
#include "kernels/cpu/avx2/vnni_encoding.h"

namespace hearth::avx2 {
namespace {

// vpdpbusd adds the four u8·s8 products of each 32-bit lane to it in int32 without saturation
// (Intel SDM vol. 2, VPDPBUSD): every block sum is exact, |Σ| <= 32·31·127 = 125984. Unsigned
// values u start each lane at -kOffset·Σa, the whole block's activations, so that the lane ends
// at Σ(u - kOffset)·a; Q8_0 multiplies |w| by sign(a, w), exact while no activation is -128.
struct DotVnni {
    static constexpr bool kUnpacksLazily = false;  // packedTile unpacks each block first (unpackPacked)
    // Panel vector by panel vector, each kept in a register for the NT tokens: one load of
    // the panel per block rather than one per token (the loads, not vpdpbusd, bound a tile).
    template <class T, int NT, class PB>
    static void addBlock(const PB& pb, const ActBlock* a, __m256* acc) {
        __m256i sum[NT];
        for (int t = 0; t < NT; ++t)
            sum[t] = T::kOffset != 0 ? _mm256_set1_epi32(static_cast<int>(a[t].offsets)) : _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
            const __m256i q = panelQ(pb, k);
            const __m256i w = T::kSigned ? panelW(pb, k) : q;
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t) {
                __m256i acts = broadcast4(a[t].q + 4 * k);
                if constexpr (T::kSigned) acts = _mm256_sign_epi8(acts, w);
                sum[t] = dpbusd256(sum[t], q, acts);
            }
        }
        const __m256 dw = panelD(pb);
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) addBlockTerm<T>(acc[t], dw, pb, a[t], sum[t]);
    }

    // -kOffset·Σa over the block, as an int32 (|.| <= 16·32·127).
    template <class T>
    static uint32_t offsets(__m256i q) {
        if constexpr (T::kOffset == 0) return 0;
        const __m256i sums = dpbusd256(_mm256_setzero_si256(), _mm256_set1_epi8(1), q);
        return static_cast<uint32_t>(-T::kOffset * hsumInt32(sums));
    }
};

}  // namespace

void HEARTH_VNNI_NAME(gemmActInfoQ32Vnni)(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    gemmActInfoWith<DotVnni>(m, tokenBegin, tokenEnd, info);
}

void HEARTH_VNNI_NAME(gemmPanelQ32Vnni)(const MatmulArgs& m, const void* actInfo, int64_t row0, void* scratch) {
    gemmPanelWith<DotVnni>(m, actInfo, row0, scratch);
}

void HEARTH_VNNI_NAME(gemmPackedRowsQ32Vnni)(const MatmulArgs& m, const void* actInfo, int64_t rowBegin, int64_t rowEnd) {
    gemmPackedRowsWith<DotVnni>(m, actInfo, rowBegin, rowEnd);
}

}  // namespace hearth::avx2
