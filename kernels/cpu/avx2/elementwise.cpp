// SwiGLU through the shared exponential's lanes, GeGLU by a gather from the GELU table, RMSNorm four rows at a time, RoPE and F16C conversions;
// tails shorter than a vector take scalar code with the reference's operations (same bits).
#include "kernels/cpu/avx2/elementwise.h"

#include <immintrin.h>
#include <math.h>

#include "kernels/cpu/avx2/softmax_exp_avx2.h"
#include "kernels/cpu/reference/gelu_tanh.h"
#include "kernels/cpu/reference/softmax_exp.h"

namespace hearth::avx2 {

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
    const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_loadu_ps(gate + i);
        const __m256 e = softmaxExp8(_mm256_or_ps(g, sign));  // exp(-|g|)
        const __m256 numerator = _mm256_blendv_ps(e, one, _mm256_cmp_ps(g, zero, _CMP_GE_OQ));  // e for NaN
        const __m256 sigmoid = _mm256_div_ps(numerator, _mm256_add_ps(one, e));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(g, sigmoid), _mm256_loadu_ps(up + i)));
    }
    for (; i < n; ++i) out[i] = swigluOne(gate[i], up[i]);
}

void geglu(const float* gate, const float* up, int64_t n, float* out) {
    const float* table = geluTable();
    const __m256 low = _mm256_set1_ps(-10.0f), high = _mm256_set1_ps(10.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(gate + i);
        const __m256i index = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m256 gelu =
            _mm256_blendv_ps(_mm256_i32gather_ps(table, index, 4), x, _mm256_cmp_ps(x, high, _CMP_GE_OQ));
        const __m256 product = _mm256_mul_ps(gelu, _mm256_loadu_ps(up + i));
        _mm256_storeu_ps(out + i, _mm256_andnot_ps(_mm256_cmp_ps(x, low, _CMP_LE_OQ), product));  // +0 where x <= -10
    }
    for (; i < n; ++i) out[i] = gegluOne(gate[i], up[i]);
}

namespace {

// sums[r] = sum over i of double(x[r][i])^2, in order of i, for four rows of n (a multiple of 4):
// lane r of the accumulator is row r's running sum; squares of floats are exact in double.
void sumSquares4(const float* x, int64_t n, double* sums) {
    __m256d acc = _mm256_setzero_pd();
    for (int64_t i = 0; i < n; i += 4) {
        __m128 r0 = _mm_loadu_ps(x + i), r1 = _mm_loadu_ps(x + n + i);
        __m128 r2 = _mm_loadu_ps(x + 2 * n + i), r3 = _mm_loadu_ps(x + 3 * n + i);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);  // r0 now holds element i of the four rows
        const __m128 columns[4] = {r0, r1, r2, r3};
        for (const __m128 column : columns) {
            const __m256d d = _mm256_cvtps_pd(column);
            acc = _mm256_add_pd(acc, _mm256_mul_pd(d, d));
        }
    }
    _mm256_storeu_pd(sums, acc);
}

double sumSquares1(const float* x, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
    return sum;
}

void scaleRow(const float* x, const float* w, int64_t n, float scale, float* y) {
    int64_t i = 0;
    const __m256 s = _mm256_set1_ps(scale);
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), s), _mm256_loadu_ps(w + i)));
    for (; i < n; ++i) y[i] = x[i] * scale * w[i];
}

}  // namespace

void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y) {
    double sums[4];
    for (int64_t r0 = 0; r0 < nRows; r0 += 4) {
        const int64_t m = nRows - r0 < 4 || n % 4 != 0 ? 1 : 4;
        if (m == 4) sumSquares4(x + r0 * n, n, sums);
        for (int64_t r = r0; r < r0 + 4 && r < nRows; ++r) {
            const double sum = m == 4 ? sums[r - r0] : sumSquares1(x + r * n, n);
            const float scale = 1.0f / sqrtf(static_cast<float>(sum / static_cast<double>(n)) + eps);
            scaleRow(x + r * n, w, n, scale, y + r * n);
        }
    }
}

// x0 c - x1 s and x0 s + x1 c as the reference computes them (no fused multiply-add).
void ropeRotate(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const float* cosines, const float* sines,
                bool halfSplit) {
    const int half = nRot / 2;
    for (int64_t t = 0; t < nTokens; ++t) {
        const float* c = cosines + t * half;
        const float* s = sines + t * half;
        for (int h = 0; h < nHeads; ++h) {
            float* head = x + (t * nHeads + h) * headDim;
            int i = 0;
            for (; halfSplit && i + 8 <= half; i += 8) {
                const __m256 x0 = _mm256_loadu_ps(head + i), x1 = _mm256_loadu_ps(head + half + i);
                const __m256 ci = _mm256_loadu_ps(c + i), si = _mm256_loadu_ps(s + i);
                _mm256_storeu_ps(head + i, _mm256_sub_ps(_mm256_mul_ps(x0, ci), _mm256_mul_ps(x1, si)));
                _mm256_storeu_ps(head + half + i, _mm256_add_ps(_mm256_mul_ps(x0, si), _mm256_mul_ps(x1, ci)));
            }
            for (; i < half; ++i) {
                const int a = halfSplit ? i : 2 * i, b = halfSplit ? i + half : 2 * i + 1;
                const float x0 = head[a], x1 = head[b];
                head[a] = x0 * c[i] - x1 * s[i];
                head[b] = x0 * s[i] + x1 * c[i];
            }
        }
    }
}

void floatsToHalves(const float* src, f16_t* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) dst[i] = f32ToF16(src[i]);
}

}  // namespace hearth::avx2
