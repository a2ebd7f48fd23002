// Element-wise CUDA kernels: RMSNorm, RoPE, SwiGLU/GeGLU, add, scale, soft-cap, embedding rows and the
// dequantization of weight rows to halves (for cuBLAS). The reference is backend_ref.cpp.
#include "kernels/cuda/plugin/device_memory.h"
#include "kernels/cuda/plugin/device_quants.cuh"
#include "kernels/cuda/plugin/elementwise.cuh"
#include "kernels/cuda/plugin/ops.h"
#include "kernels/cuda/plugin/warp_reduce.cuh"

namespace hearth::cuda {
namespace {

constexpr int kThreads = 256;

unsigned gridFor(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void rmsNormKernel(const float* x, const float* w, int64_t n, float eps, float* y) {
    const float* xr = x + blockIdx.x * n;
    float* yr = y + blockIdx.x * n;
    __shared__ float partial[kNormThreads / 32];
    const float scale = rowRmsScale(xr, n, eps, partial);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = xr[i] * scale * w[i];
}

// One thread per (token, head, pair); theta built by repeated multiplication as the reference.
__global__ void ropeKernel(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions,
                           float thetaScale, const float* freqFactors, bool pairwise) {
    const int half = nRot / 2;
    const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (idx >= nTokens * nHeads * half) return;
    const int i = static_cast<int>(idx % half);
    const int64_t th = idx / half;  // token * nHeads + head
    float theta = static_cast<float>(positions[th / nHeads]);
    for (int k = 0; k < i; ++k) theta *= thetaScale;
    if (freqFactors != nullptr) theta /= freqFactors[i];
    float s, c;
    sincosf(theta, &s, &c);
    float* head = x + th * headDim;
    const int a = pairwise ? 2 * i : i, b = pairwise ? 2 * i + 1 : i + half;
    const float x0 = head[a], x1 = head[b];
    head[a] = x0 * c - x1 * s;
    head[b] = x0 * s + x1 * c;
}

__global__ void swigluKernel(const float* gate, const float* up, int64_t n, float* out) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = swigluValue(gate[i], up[i]);
}

__global__ void gegluKernel(const float* gate, const float* up, int64_t n, float* out) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = gegluValue(gate[i], up[i]);
}

__global__ void addKernel(float* x, const float* y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) x[i] += y[i];
}

__global__ void scaleKernel(float* x, int64_t nRows, int64_t rowStride, int64_t n, float s) {
    const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (idx < nRows * n) x[idx / n * rowStride + idx % n] *= s;
}

// The soft-cap as the CPU's softcapScore computes it (CUDA's tanhf may be an ulp from glibc's).
__global__ void softcapKernel(float* x, int64_t n, float cap) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) x[i] = cap * tanhf(x[i] / cap);
}

__device__ __forceinline__ float elementOf(DType t, bool planar, const uint8_t* row, int64_t nCols, int64_t c) {
    return planar ? dequantOnePlanar(t, row, nCols, c) : dequantOne(t, row, c);
}

__global__ void embeddingKernel(DType t, bool planar, const uint8_t* table, size_t rowSize, int64_t nCols,
                                const int32_t* ids, int64_t n, float* out) {
    const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (idx >= n * nCols) return;
    const int64_t r = idx / nCols, c = idx % nCols;
    out[idx] = elementOf(t, planar, table + rowSize * static_cast<size_t>(ids[r]), nCols, c);
}

__global__ void toHalfKernel(DType t, bool planar, const uint8_t* rows, size_t rowSize, int64_t nRows, int64_t nCols,
                             __half* out) {
    const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (idx >= nRows * nCols) return;
    const int64_t r = idx / nCols, c = idx % nCols;
    out[idx] = __float2half_rn(elementOf(t, planar, rows + rowSize * static_cast<size_t>(r), nCols, c));
}

}  // namespace

void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y, cudaStream_t s) {
    if (nRows > 0) {
        rmsNormKernel<<<static_cast<unsigned>(nRows), kNormThreads, 0, s>>>(x, w, n, eps, y);
        countLaunches(1);
    }
}

void rope(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions, float freqBase,
          const float* freqFactors, bool pairwise, cudaStream_t s) {
    const int64_t n = nTokens * nHeads * (nRot / 2);
    const float thetaScale = powf(freqBase, -2.0f / static_cast<float>(nRot));
    if (n > 0) {
        ropeKernel<<<gridFor(n), kThreads, 0, s>>>(x, nTokens, nHeads, headDim, nRot, positions, thetaScale,
                                                       freqFactors, pairwise);
        countLaunches(1);
    }
}

void swiglu(const float* gate, const float* up, int64_t n, float* out, cudaStream_t s) {
    if (n > 0) {
        swigluKernel<<<gridFor(n), kThreads, 0, s>>>(gate, up, n, out);
        countLaunches(1);
    }
}

void geglu(const float* gate, const float* up, int64_t n, float* out, cudaStream_t s) {
    if (n > 0) {
        gegluKernel<<<gridFor(n), kThreads, 0, s>>>(gate, up, n, out);
        countLaunches(1);
    }
}

void add(float* x, const float* y, int64_t n, cudaStream_t s) {
    if (n > 0) {
        addKernel<<<gridFor(n), kThreads, 0, s>>>(x, y, n);
        countLaunches(1);
    }
}

void scale(float* x, int64_t nRows, int64_t rowStride, int64_t n, float s, cudaStream_t stream) {
    if (nRows > 0 && n > 0) {
        scaleKernel<<<gridFor(nRows * n), kThreads, 0, stream>>>(x, nRows, rowStride, n, s);
        countLaunches(1);
    }
}

void softcap(float* x, int64_t n, float cap, cudaStream_t s) {
    if (n > 0 && cap > 0.0f) {
        softcapKernel<<<gridFor(n), kThreads, 0, s>>>(x, n, cap);
        countLaunches(1);
    }
}

void embeddingRows(DType t, bool planar, const uint8_t* table, int64_t nCols, const int32_t* ids, int64_t n, float* out,
                   cudaStream_t s) {
    const int64_t total = n * nCols;
    if (total > 0) {
        embeddingKernel<<<gridFor(total), kThreads, 0, s>>>(t, planar, table, rowBytes(t, nCols), nCols, ids, n, out);
        countLaunches(1);
    }
}

void dequantizeToHalf(DType t, bool planar, const uint8_t* rows, int64_t nRows, int64_t nCols, __half* out,
                      cudaStream_t s) {
    const int64_t total = nRows * nCols;
    if (total > 0) {
        toHalfKernel<<<gridFor(total), kThreads, 0, s>>>(t, planar, rows, rowBytes(t, nCols), nRows, nCols, out);
        countLaunches(1);
    }
}

}  // namespace hearth::cuda
