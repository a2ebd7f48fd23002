// softmaxExp8 (kernels/cpu/avx2/softmax_exp_avx2.h) over an array, for test_softmax_exp. Compiled
// with -mavx2 -mfma (tests/kernels/cpu/tests.cmake); called only when the CPU can run AVX2.
#include "kernels/cpu/avx2/softmax_exp_avx2.h"

namespace hearth::test {

void softmaxExpLanes(const float* x, float* y, int n) {
    for (int i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, avx2::softmaxExp8(_mm256_loadu_ps(x + i)));
}

}  // namespace hearth::test
