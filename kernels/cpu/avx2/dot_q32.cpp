// The AVX2 policy of the 32-block matrix-vector tiles (dot_q32_tiles.h holds the algorithm):
// integer sums with maddubs/madd (simd.h). kernels.h's entry points; matmulRowsQ32 hands over
// to the AVX-VNNI build (dot_q32_vnni.cpp) when MatmulArgs::avxVnni asks for it.
#include "kernels/cpu/avx2/dot_q32_tiles.h"
#include "kernels/cpu/avx2/gemm_q32_vnni.h"

namespace hearth::avx2 {
namespace {

struct DotAvx2 {
    static __m256i u8(__m256i w, __m256i a) { return dotU8(w, a); }
    static __m256i s8(__m256i w, __m256i a) { return dotS8(w, a); }
};

}  // namespace

void matmulRowsQ32(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    if (m.avxVnni) return matmulRowsQ32Vnni(m, rowBegin, rowEnd);
    matmulRowsWith<DotAvx2>(m, rowBegin, rowEnd);
}

float vecDotQ32(DType w, const void* weightRow, const void* actRow, int64_t n) {
    return vecDotWith<DotAvx2>(w, weightRow, actRow, n);
}

}  // namespace hearth::avx2
