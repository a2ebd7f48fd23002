// Per-element and per-row pieces that the element-wise kernels (ops_elementwise.cu), the fused
// input of a product (ops_matvec.cu: prepareKernel) and the KV writes (ops_attention.cu, and
// qkRopeKvWrite) share, so that each fused launch gives the bits of the separate ones.
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

// qkRope's operands (ops.h: qkRope), thetaScale = freqBase^(-2 / nRot).
struct QkRopeArgs {
    float* q;
    float* k;
    int nHeads, nKvHeads, headDim, nRot;
    const float* qNorm;
    const float* kNorm;
    float eps, thetaScale;
    const float* freqFactors;
    bool pairwise;
    float attnFactor;
};

// One head of q or k made ready by a whole warp (headDim <= 1024): its RMSNorm (norm, where
// given) reduced as rmsNormKernel reduces a row of headDim (one element a thread, each warp's
// butterfly, then the warps' sums by a butterfly), so the bits are its; then ropeKernel's
// rotation and scaleKernel's factor on the same values.
__device__ inline void normRopeHead(const QkRopeArgs& r, float* head, const float* norm, int position, int lane) {
    const int n = r.headDim;
    if (norm != nullptr) {
        float chunkSums = 0.0f;  // lane w: the sum of squares of elements [32w, 32w + 32)
        for (int w = 0; w * 32 < n; ++w) {
            const int i = 32 * w + lane;
            float sum = 0.0f;
            if (i < n) sum += head[i] * head[i];
            sum = warpSum(sum);
            if (lane == w) chunkSums = sum;
        }
        const float total = warpSum(chunkSums);
        const float scale = 1.0f / sqrtf(total / static_cast<float>(n) + r.eps);
        for (int i = lane; i < n; i += 32) head[i] = head[i] * scale * norm[i];
        __syncwarp();
    }
    const int half = r.nRot / 2;
    for (int i = lane; i < half; i += 32) {
        const int a = r.pairwise ? 2 * i : i, b = r.pairwise ? 2 * i + 1 : i + half;
        float y0, y1;
        ropeRotate(head[a], head[b], ropeTheta(position, i, r.thetaScale, r.freqFactors), y0, y1);
        if (r.attnFactor != 1.0f) y0 *= r.attnFactor, y1 *= r.attnFactor;
        head[a] = y0, head[b] = y1;
    }
}

// One warp per 32-element block of one row: GGUF's Q8_0, as ref::quantizeRow (x86 rounding).
__device__ inline void quantizeQ8Block(const float* x, uint8_t* block, int lane) {
    const float value = x[lane];
    const float amax = warpMax(fabsf(value));
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    const float r = rintf(value * id);  // nearest-even, as the reference
    block[2 + lane] = static_cast<uint8_t>(static_cast<int8_t>(isnan(r) ? 0.0f : fminf(fmaxf(r, -128.0f), 127.0f)));
    if (lane == 0) *reinterpret_cast<__half*>(block) = __float2half_rn(d);
}

// n values of a K or V row written by a whole warp as the KV write kernels write them: F16
// halves, or Q8_0 blocks (n a multiple of 32).
__device__ inline void storeKvValues(const float* src, uint8_t* dst, int n, bool q8, int lane) {
    if (q8) {
        for (int b = 0; 32 * b < n; ++b) quantizeQ8Block(src + 32 * b, dst + 34 * b, lane);
        return;
    }
    for (int i = lane; i < n; i += 32) reinterpret_cast<__half*>(dst)[i] = __float2half_rn(src[i]);
}

}  // namespace hearth::cuda
