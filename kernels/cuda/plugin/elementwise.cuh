// Per-element and per-row pieces that the element-wise kernels (ops_elementwise.cu) and the
// fused input of a product (ops_matvec.cu: prepareKernel) share, so that both give the same bits.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/plugin/warp_reduce.cuh"

namespace hearth::cuda {

// One block of kNormThreads per row (a few elements a thread: the loads of a row go out
// together); the sum of squares in float (the reference sums in double).
constexpr int kNormThreads = 1024;

// 1 / sqrt(mean(xr^2) + eps) for a row of n, reduced over the block (kNormThreads threads,
// every one calls it): each thread's elements in order, the warps' butterflies, then the warps'
// sums by a butterfly in the first warp. partial: kNormThreads / 32 floats of shared memory.
__device__ inline float rowRmsScale(const float* xr, int64_t n, float eps, float* partial) {
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += xr[i] * xr[i];
    sum = warpSum(sum);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        v = warpSum(v);
        if (threadIdx.x == 0) partial[0] = v;
    }
    __syncthreads();
    return 1.0f / sqrtf(partial[0] / static_cast<float>(n) + eps);
}

// RoPE pair i's angle at `position` (theta built by repeated multiplication, as the reference),
// and the pair (x0, x1) rotated by it into (y0, y1).
__device__ __forceinline__ float ropeTheta(int position, int i, float thetaScale, const float* freqFactors) {
    float theta = static_cast<float>(position);
    for (int k = 0; k < i; ++k) theta *= thetaScale;
    if (freqFactors != nullptr) theta /= freqFactors[i];
    return theta;
}
__device__ __forceinline__ void ropeRotate(float x0, float x1, float theta, float& y0, float& y1) {
    float s, c;
    sincosf(theta, &s, &c);
    y0 = x0 * c - x1 * s;
    y1 = x0 * s + x1 * c;
}

__device__ __forceinline__ float swigluValue(float gate, float up) { return gate / (1.0f + expf(-gate)) * up; }

// The reference's GELU (kernels/cpu/reference/gelu_tanh.h): the gate rounded to F16, the tanh
// form in float, the result rounded to F16 (llama.cpp's table); 0 below -10, x above 10. Where
// CUDA's tanhf and glibc's differ by an ulp near an F16 rounding boundary, one F16 step apart.
__device__ __forceinline__ float gegluValue(float g, float up) {
    if (g <= -10.0f) return 0.0f;
    if (g >= 10.0f) return g * up;
    const float x = __half2float(__float2half_rn(g));
    const float gelu = 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * x * (1.0f + 0.044715f * x * x)));
    return __half2float(__float2half_rn(gelu)) * up;
}

}  // namespace hearth::cuda
