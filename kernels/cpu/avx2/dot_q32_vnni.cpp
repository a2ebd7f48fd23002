// The AVX-VNNI policy of the 32-block matrix-vector tiles (dot_q32_tiles.h holds the
// algorithm): one vpdpbusd where AVX2 needs maddubs + madd. Built with -mavxvnni (and again for
// EVEX through dot_q32_vnni_evex.cpp, vnni_encoding.h) and run only when
// cpuFeatures().canRunVnni() (avxVnniEnabled() in the backend).
#include "kernels/cpu/avx2/dot_q32_tiles.h"
#include "kernels/cpu/avx2/gemm_q32_vnni.h"
#include "kernels/cpu/avx2/vnni_encoding.h"

namespace hearth::avx2 {
namespace {

// vpdpbusd sums the four u8·s8 products of each 32-bit lane in int32, without saturation
// (Intel SDM vol. 2, VPDPBUSD). s8: |w|·sign(a, w), exact while no activation is -128 (dotS8).
struct DotVnni {
    static __m256i u8(__m256i w, __m256i a) { return dpbusd256(_mm256_setzero_si256(), w, a); }
    static __m256i s8(__m256i w, __m256i a) {
        return dpbusd256(_mm256_setzero_si256(), _mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
    }
    static __m256i u8Pair(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi) {
        return dpbusd256(dpbusd256(_mm256_setzero_si256(), lo, aLo), hi, aHi);
    }
    static __m256i s8Pair(__m256i lo, __m256i hi, __m256i aLo, __m256i aHi) {
        const __m256i sum =
            dpbusd256(_mm256_setzero_si256(), _mm256_sign_epi8(lo, lo), _mm256_sign_epi8(aLo, lo));
        return dpbusd256(sum, _mm256_sign_epi8(hi, hi), _mm256_sign_epi8(aHi, hi));
    }
};

}  // namespace

void HEARTH_VNNI_NAME(matmulRowsQ32Vnni)(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    matmulRowsWith<DotVnni>(m, rowBegin, rowEnd);
}

}  // namespace hearth::avx2
