// The AVX-512 loop of kernels/cpu/machine_probe.h, compiled with -mavx512f
// (kernels/CMakeLists.txt), called only where cpuFeatures().canRunAvx512(): the fp32 FMA peak
// with ZMM registers, the yardstick for kernels that have an AVX-512 build (gemm_float_avx512.cpp).
#include <immintrin.h>

#include <cstdint>

namespace hearth::probe {

// 12 independent chains acc = acc·m + a on ZMM, iters times each: 12·16·2 flops per iteration.
float fmaChainsAvx512(int64_t iters) {
    const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-6f);
    __m512 acc[12];
    for (int k = 0; k < 12; ++k) acc[k] = _mm512_set1_ps(static_cast<float>(k));
    for (int64_t i = 0; i < iters; ++i)
        for (__m512& x : acc) x = _mm512_fmadd_ps(x, m, a);
    for (int k = 1; k < 12; ++k) acc[0] = _mm512_add_ps(acc[0], acc[k]);
    float lanes[16];
    _mm512_storeu_ps(lanes, acc[0]);
    return lanes[0] + lanes[15];
}

}  // namespace hearth::probe
