// The AVX-VNNI policy of the 32-block matrix-vector tiles (dot_q32_tiles.h holds the
// algorithm): one vpdpbusd where AVX2 needs maddubs + madd. Built with -mavxvnni and run only
// when cpuFeatures().canRunAvxVnni() (avxVnniEnabled() in the backend).
#include "kernels/cpu/avx2/dot_q32_tiles.h"
#include "kernels/cpu/avx2/gemm_q32_vnni.h"

namespace hearth::avx2 {
namespace {

// vpdpbusd sums the four u8·s8 products of each 32-bit lane in int32, without saturation
// (Intel SDM vol. 2, VPDPBUSD). s8: |w|·sign(a, w), exact while no activation is -128 (dotS8).
struct DotVnni {
    static __m256i u8(__m256i w, __m256i a) { return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), w, a); }
    static __m256i s8(__m256i w, __m256i a) {
        return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
    }
};

}  // namespace

void matmulRowsQ32Vnni(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    matmulRowsWith<DotVnni>(m, rowBegin, rowEnd);
}

}  // namespace hearth::avx2
