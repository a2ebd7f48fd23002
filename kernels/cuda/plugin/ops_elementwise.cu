// Element-wise CUDA kernels: RMSNorm, RoPE, SwiGLU/GeGLU, add, scale, soft-cap, embedding rows and the
// dequantization of weight rows to halves (for cuBLAS). The reference is backend_ref.cpp.
#include "kernels/cuda/plugin/attention_grouped.cuh"
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

// One thread per (token, head, pair).
__global__ void ropeKernel(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions,
                           float thetaScale, const float* freqFactors, bool pairwise) {
    const int half = nRot / 2;
    const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (idx >= nTokens * nHeads * half) return;
    const int i = static_cast<int>(idx % half);
    const int64_t th = idx / half;  // token * nHeads + head
    const float theta = ropeTheta(positions[th / nHeads], i, thetaScale, freqFactors);
    float* head = x + th * headDim;
    const int a = pairwise ? 2 * i : i, b = pairwise ? 2 * i + 1 : i + half;
    ropeRotate(head[a], head[b], theta, head[a], head[b]);
}

// qkRope: one warp per (token, head) of q, then of k (normRopeHead).
__global__ void qkRopeKernel(QkRopeArgs r, const int32_t* positions, int64_t nTokens) {
    const int64_t warp = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32;
    const int heads = r.nHeads + r.nKvHeads;
    if (warp >= nTokens * heads) return;
    const int lane = threadIdx.x % 32;
    const int64_t t = warp / heads;
    const int h = static_cast<int>(warp % heads);
    const bool isQ = h < r.nHeads;
    float* head = isQ ? r.q + (t * r.nHeads + h) * r.headDim : r.k + (t * r.nKvHeads + (h - r.nHeads)) * r.headDim;
    normRopeHead(r, head, isQ ? r.qNorm : r.kNorm, positions[t], lane);
}

// qkRope and kvWriteRows in one launch (ropeWriteJob): qkRopeKernel's work on each Q and K
// head, each K head then written to its cache row while the warp still holds it, and a warp per
// V head writing it; the values the KV write kernels would store (storeKvValues).
__global__ void qkRopeKvWriteKernel(QkRopeArgs r, const int32_t* positions, int64_t nTokens, KvTables layout,
                                    KvWriteRows rows) {
    const int64_t warp = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32;
    if (warp >= nTokens * (r.nHeads + 2 * r.nKvHeads)) return;
    const int lane = threadIdx.x % 32;
    const RopeWriteJob job = ropeWriteJob(r.q, r.k, r.nHeads, r.nKvHeads, r.headDim, rows, layout, warp);
    if (job.kind != RopeWriteJob::V) {
        normRopeHead(r, job.x, job.kind == RopeWriteJob::Q ? r.qNorm : r.kNorm, positions[job.token], lane);
        if (job.kind == RopeWriteJob::Q) return;
        __syncwarp();  // the other lanes' rotated values, before they are stored
    }
    storeKvValues(job.src, job.dst, r.headDim, layout.q8, lane);
}

QkRopeArgs qkRopeArgs(float* q, float* k, int nHeads, int nKvHeads, int headDim, int nRot, const float* qNorm,
                      const float* kNorm, float eps, float freqBase, const float* freqFactors, bool pairwise,
                      float attnFactor) {
    const float thetaScale = powf(freqBase, -2.0f / static_cast<float>(nRot));
    return {q, k, nHeads, nKvHeads, headDim, nRot, qNorm, kNorm, eps, thetaScale, freqFactors, pairwise, attnFactor};
}

// x += rmsNorm(y, w), y normalised in place: rmsNormKernel's values, then addKernel's sum (kept
// apart: a fused multiply-add would round once where the separate kernels round twice).
__global__ void addRmsNormedKernel(float* x, float* y, const float* w, int64_t n, float eps) {
    float* xr = x + blockIdx.x * n;
    float* yr = y + blockIdx.x * n;
    __shared__ float partial[kNormThreads / 32];
    const float scale = rowRmsScale(yr, n, eps, partial);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = yr[i] * scale * w[i];
        yr[i] = v;
        xr[i] = __fadd_rn(xr[i], v);
    }
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

// Rows of a multiple of 8 elements: eight a thread (a block's scales read once, one 16-byte
// store). Per element, the old kernel spent about as many instructions as its bytes took time.
__global__ void toHalfEightKernel(DType t, bool planar, const uint8_t* rows, size_t rowSize, int64_t nRows,
                                  int64_t nCols, __half* out) {
    const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x, perRow = nCols / 8;
    if (idx >= nRows * perRow) return;
    const int64_t r = idx / perRow, c0 = idx % perRow * 8;
    float v[8];
    dequantEight(t, planar, rows + rowSize * static_cast<size_t>(r), nCols, c0, v);
    __align__(16) __half2 h[4];
    for (int k = 0; k < 4; ++k) h[k] = __floats2half2_rn(v[2 * k], v[2 * k + 1]);
    *reinterpret_cast<int4*>(out + r * nCols + c0) = *reinterpret_cast<const int4*>(h);
}

// Backend::argmaxRows: one block of 1,024 threads a row. A candidate (value, index) beats
// another with a greater value, or an equal one (-0 == +0) at a lower index; NaNs never win, and
// a row that starts with a NaN gives 0 — the host scan's answers.
constexpr int kArgmaxThreads = 1024;
__device__ __forceinline__ bool beats(float v, int64_t i, float bv, int64_t bi) {
    return !isnan(v) && (bi < 0 || v > bv || (v == bv && i < bi));
}
__global__ void argmaxKernel(const float* x, int64_t n, int32_t* out) {
    const float* row = x + blockIdx.x * n;
    float best = 0.0f;
    int64_t at = -1;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        if (beats(row[i], i, best, at)) best = row[i], at = i;
    for (int o = 16; o > 0; o >>= 1) {
        const float v = __shfl_xor_sync(0xffffffffu, best, o);
        const int64_t i = __shfl_xor_sync(0xffffffffu, at, o);
        if (i >= 0 && beats(v, i, best, at)) best = v, at = i;
    }
    __shared__ float warpBest[kArgmaxThreads / 32];
    __shared__ int64_t warpAt[kArgmaxThreads / 32];
    if (threadIdx.x % 32 == 0) warpBest[threadIdx.x / 32] = best, warpAt[threadIdx.x / 32] = at;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
            if (warpAt[w] >= 0 && beats(warpBest[w], warpAt[w], best, at)) best = warpBest[w], at = warpAt[w];
        out[blockIdx.x] = n == 0 || isnan(row[0]) || at < 0 ? 0 : static_cast<int32_t>(at);
    }
}

}  // namespace

void argmaxRows(const float* x, int64_t nRows, int64_t n, int32_t* out, cudaStream_t s) {
    if (nRows > 0) {
        argmaxKernel<<<static_cast<unsigned>(nRows), kArgmaxThreads, 0, s>>>(x, n, out);
        countLaunches(1);
    }
}

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

void qkRope(float* q, float* k, int nHeads, int nKvHeads, int headDim, int nRot, const float* qNorm, const float* kNorm,
            float eps, const int32_t* positions, int64_t nTokens, float freqBase, const float* freqFactors,
            bool pairwise, float attnFactor, cudaStream_t s) {
    const int64_t warps = nTokens * (nHeads + nKvHeads);
    if (warps <= 0) return;
    const QkRopeArgs args = qkRopeArgs(q, k, nHeads, nKvHeads, headDim, nRot, qNorm, kNorm, eps, freqBase, freqFactors,
                                       pairwise, attnFactor);
    qkRopeKernel<<<static_cast<unsigned>((warps + 3) / 4), 128, 0, s>>>(args, positions, nTokens);
    countLaunches(1);
}

void qkRopeKvWrite(float* q, float* k, int nHeads, int nKvHeads, int headDim, int nRot, const float* qNorm,
                   const float* kNorm, float eps, const int32_t* positions, int64_t nTokens, float freqBase,
                   const float* freqFactors, bool pairwise, float attnFactor, const KvTables& layout,
                   const KvWriteRows& rows, cudaStream_t s) {
    const int64_t warps = nTokens * (nHeads + 2 * nKvHeads);
    if (warps <= 0) return;
    const QkRopeArgs args = qkRopeArgs(q, k, nHeads, nKvHeads, headDim, nRot, qNorm, kNorm, eps, freqBase, freqFactors,
                                       pairwise, attnFactor);
    qkRopeKvWriteKernel<<<static_cast<unsigned>((warps + 3) / 4), 128, 0, s>>>(args, positions, nTokens, layout, rows);
    countLaunches(1);
}

void addRmsNormed(float* x, float* y, const float* w, int64_t nRows, int64_t n, float eps, cudaStream_t s) {
    if (nRows > 0) {
        addRmsNormedKernel<<<static_cast<unsigned>(nRows), kNormThreads, 0, s>>>(x, y, w, n, eps);
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
    if (total > 0 && nCols % 8 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0) {
        toHalfEightKernel<<<gridFor(total / 8), kThreads, 0, s>>>(t, planar, rows, rowBytes(t, nCols), nRows, nCols,
                                                                  out);
        countLaunches(1);
    } else if (total > 0) {
        toHalfKernel<<<gridFor(total), kThreads, 0, s>>>(t, planar, rows, rowBytes(t, nCols), nRows, nCols, out);
        countLaunches(1);
    }
}

}  // namespace hearth::cuda
