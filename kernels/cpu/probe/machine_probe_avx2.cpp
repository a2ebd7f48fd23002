// The AVX2 loops of kernels/cpu/machine_probe.h, compiled with -mavx2 -mfma (kernels/CMakeLists.txt): plain
// functions over raw pointers, no inline code from headers, called only when the CPU has AVX2.
#include <immintrin.h>

#include <cstdint>

namespace hearth::probe {

// Sum of n floats (n a multiple of 64, p 32-byte aligned): 8 independent accumulators, so
// loads, not the add latency, set the pace.
float readSumAvx2(const float* p, int64_t n) {
    __m256 acc[8];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 64)
        for (int k = 0; k < 8; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_load_ps(p + i + 8 * k));
    for (int k = 1; k < 8; ++k) acc[0] = _mm256_add_ps(acc[0], acc[k]);
    float lanes[8];
    _mm256_storeu_ps(lanes, acc[0]);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

// STREAM triad a = b + s·c over n floats (a multiple of 32, 32-byte aligned), ordinary stores.
void triadAvx2(float* a, const float* b, const float* c, float s, int64_t n) {
    const __m256 vs = _mm256_set1_ps(s);
    for (int64_t i = 0; i < n; i += 32)
        for (int k = 0; k < 4; ++k) {
            const int64_t j = i + 8 * k;
            _mm256_store_ps(a + j, _mm256_fmadd_ps(vs, _mm256_load_ps(c + j), _mm256_load_ps(b + j)));
        }
}

// 12 independent chains acc = acc·m + a, iters times each: 12·8·2 flops per iteration.
float fmaChainsAvx2(int64_t iters) {
    const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-6f);
    __m256 acc[12];
    for (int k = 0; k < 12; ++k) acc[k] = _mm256_set1_ps(static_cast<float>(k));
    for (int64_t i = 0; i < iters; ++i)
        for (__m256& x : acc) x = _mm256_fmadd_ps(x, m, a);
    for (int k = 1; k < 12; ++k) acc[0] = _mm256_add_ps(acc[0], acc[k]);
    return _mm256_cvtss_f32(acc[0]);
}

// The yardstick: a hand-written loop of 12 vfmadd231ps on ymm0-ymm11, iters times.
void fmaPlainAsm(int64_t iters) {
    if (iters <= 0) return;
    __asm__ volatile(
        "vxorps %%ymm0, %%ymm0, %%ymm0\n\tvxorps %%ymm1, %%ymm1, %%ymm1\n\t"
        "vxorps %%ymm2, %%ymm2, %%ymm2\n\tvxorps %%ymm3, %%ymm3, %%ymm3\n\t"
        "vxorps %%ymm4, %%ymm4, %%ymm4\n\tvxorps %%ymm5, %%ymm5, %%ymm5\n\t"
        "vxorps %%ymm6, %%ymm6, %%ymm6\n\tvxorps %%ymm7, %%ymm7, %%ymm7\n\t"
        "vxorps %%ymm8, %%ymm8, %%ymm8\n\tvxorps %%ymm9, %%ymm9, %%ymm9\n\t"
        "vxorps %%ymm10, %%ymm10, %%ymm10\n\tvxorps %%ymm11, %%ymm11, %%ymm11\n\t"
        "vxorps %%ymm14, %%ymm14, %%ymm14\n\tvxorps %%ymm15, %%ymm15, %%ymm15\n\t"
        "1:\n\t"
        "vfmadd231ps %%ymm14, %%ymm15, %%ymm0\n\tvfmadd231ps %%ymm14, %%ymm15, %%ymm1\n\t"
        "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n\tvfmadd231ps %%ymm14, %%ymm15, %%ymm3\n\t"
        "vfmadd231ps %%ymm14, %%ymm15, %%ymm4\n\tvfmadd231ps %%ymm14, %%ymm15, %%ymm5\n\t"
        "vfmadd231ps %%ymm14, %%ymm15, %%ymm6\n\tvfmadd231ps %%ymm14, %%ymm15, %%ymm7\n\t"
        "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n\tvfmadd231ps %%ymm14, %%ymm15, %%ymm9\n\t"
        "vfmadd231ps %%ymm14, %%ymm15, %%ymm10\n\tvfmadd231ps %%ymm14, %%ymm15, %%ymm11\n\t"
        "dec %0\n\tjnz 1b\n\t"
        "vzeroupper\n\t"
        : "+r"(iters)
        :
        : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
          "xmm14", "xmm15");
}

}  // namespace hearth::probe
