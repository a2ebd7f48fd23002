// KV writes into device copies of the paged blocks, and attention over them: one warp per
// (token, head, split of kAttentionSplit positions) with an online softmax (Milakov &
// Gimelshein, arXiv 1805.02867), then a pass merging the splits (flash-decoding), so that one
// long sequence spreads over the GPU. Splits are fixed by position, not by the batch.
#include <cfloat>

#include "kernels/cuda/plugin/device_memory.h"
#include "kernels/cuda/plugin/device_quants.cuh"
#include "kernels/cuda/plugin/ops.h"
#include "kernels/cuda/plugin/warp_reduce.cuh"

namespace hearth::cuda {
namespace {

constexpr int kMaxHeadDim = 256;
constexpr int kPerLane = kMaxHeadDim / 32;

__device__ uint8_t* rowAt(uint8_t* const* blocks, const KvTables& kv, int position) {
    return blocks[position / kv.blockSize] + static_cast<size_t>(position % kv.blockSize) * kv.rowBytes;
}

__global__ void kvWriteF16Kernel(KvTables kv, const float* k, const float* v, const int32_t* positions, int64_t n) {
    const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (idx >= n * kv.rowStride) return;
    const int64_t t = idx / kv.rowStride, i = idx % kv.rowStride;
    reinterpret_cast<__half*>(rowAt(kv.kBlocks, kv, positions[t]))[i] = __float2half_rn(k[idx]);
    reinterpret_cast<__half*>(rowAt(kv.vBlocks, kv, positions[t]))[i] = __float2half_rn(v[idx]);
}

// One warp per 32-element block of one row: GGUF's Q8_0, as ref::quantizeRow (x86 rounding).
__device__ void quantizeQ8Block(const float* x, uint8_t* block, int lane) {
    const float value = x[lane];
    const float amax = warpMax(fabsf(value));
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    const float r = rintf(value * id);  // nearest-even, as the reference
    block[2 + lane] = static_cast<uint8_t>(static_cast<int8_t>(isnan(r) ? 0.0f : fminf(fmaxf(r, -128.0f), 127.0f)));
    if (lane == 0) *reinterpret_cast<__half*>(block) = __float2half_rn(d);
}

__global__ void kvWriteQ8Kernel(KvTables kv, const float* k, const float* v, const int32_t* positions, int64_t n) {
    const int64_t warp = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32;
    const int64_t perRow = kv.rowStride / 32;
    if (warp >= n * perRow) return;
    const int64_t t = warp / perRow, b = warp % perRow;
    const int lane = threadIdx.x % 32;
    quantizeQ8Block(k + t * kv.rowStride + b * 32, rowAt(kv.kBlocks, kv, positions[t]) + b * 34, lane);
    quantizeQ8Block(v + t * kv.rowStride + b * 32, rowAt(kv.vBlocks, kv, positions[t]) + b * 34, lane);
}

// Element i of a head's K or V slice (F16 row, or Q8_0 blocks of 34 bytes).
__device__ float kvElement(const uint8_t* head, int i, bool q8) {
    if (!q8) return __half2float(reinterpret_cast<const __half*>(head)[i]);
    const uint8_t* b = head + (i / 32) * 34;
    return static_cast<float>(static_cast<int8_t>(b[2 + i % 32])) * ldHalf(b);
}

// partial layout per (token, head, split): [max, sum, acc[headDim]].
__global__ void attentionSplitKernel(KvTables kv, AttentionParams p, const float* q, const int32_t* positions,
                                     float* partial) {
    const int h = blockIdx.x, t = blockIdx.y, split = blockIdx.z, lane = threadIdx.x;
    const int nCtx = positions[t] + 1;
    const int first = p.slidingWindow > 0 ? max(0, nCtx - p.slidingWindow) : 0;
    const int begin = max(first, split * kAttentionSplit), end = min(nCtx, (split + 1) * kAttentionSplit);
    const int groupSize = p.nHeads / p.nKvHeads;
    const size_t headOffset = kv.q8 ? static_cast<size_t>((h / groupSize) * p.headDim / 32) * 34
                                    : static_cast<size_t>((h / groupSize) * p.headDim) * 2;
    float qv[kPerLane], acc[kPerLane];
    const float* qHead = q + (static_cast<int64_t>(t) * p.nHeads + h) * p.headDim;
    for (int j = 0; j < kPerLane; ++j) {
        const int i = lane + 32 * j;
        const float x = i < p.headDim ? qHead[i] : 0.0f;
        qv[j] = kv.q8 ? x : __half2float(__float2half_rn(x));  // the F16 reference rounds q to F16
        acc[j] = 0.0f;
    }
    float runningMax = -FLT_MAX, runningSum = 0.0f;
    for (int pos = begin; pos < end; ++pos) {
        const uint8_t* kHead = rowAt(kv.kBlocks, kv, pos) + headOffset;
        float dot = 0.0f;
        for (int j = 0; j < kPerLane; ++j)
            if (lane + 32 * j < p.headDim) dot += qv[j] * kvElement(kHead, lane + 32 * j, kv.q8);
        float score = warpSum(dot) * p.scale;
        if (p.softcap > 0.0f) score = p.softcap * tanhf(score / p.softcap);
        const float newMax = fmaxf(runningMax, score);
        const float accScale = expf(runningMax - newMax), weight = expf(score - newMax);
        const uint8_t* vHead = rowAt(kv.vBlocks, kv, pos) + headOffset;
        for (int j = 0; j < kPerLane; ++j)
            if (lane + 32 * j < p.headDim) acc[j] = acc[j] * accScale + kvElement(vHead, lane + 32 * j, kv.q8) * weight;
        runningSum = runningSum * accScale + weight;
        runningMax = newMax;
    }
    float* out = partial + ((static_cast<int64_t>(t) * p.nHeads + h) * p.nSplits + split) * (p.headDim + 2);
    if (lane == 0) {
        out[0] = begin < end ? runningMax : -FLT_MAX;
        out[1] = runningSum;
    }
    for (int j = 0; j < kPerLane; ++j)
        if (lane + 32 * j < p.headDim) out[2 + lane + 32 * j] = acc[j];
}

// One block per (head, token): merges the splits in split order.
__global__ void attentionMergeKernel(AttentionParams p, const float* partial, float* out) {
    const int h = blockIdx.x, t = blockIdx.y;
    const float* parts = partial + (static_cast<int64_t>(t) * p.nHeads + h) * p.nSplits * (p.headDim + 2);
    float globalMax = -FLT_MAX;
    for (int sp = 0; sp < p.nSplits; ++sp) globalMax = fmaxf(globalMax, parts[sp * (p.headDim + 2)]);
    float total = 0.0f;
    for (int sp = 0; sp < p.nSplits; ++sp) {
        const float* part = parts + sp * (p.headDim + 2);
        if (part[1] > 0.0f) total += part[1] * expf(part[0] - globalMax);
    }
    for (int i = threadIdx.x; i < p.headDim; i += blockDim.x) {
        float v = 0.0f;
        for (int sp = 0; sp < p.nSplits; ++sp) {
            const float* part = parts + sp * (p.headDim + 2);
            if (part[1] > 0.0f) v += part[2 + i] * expf(part[0] - globalMax);
        }
        out[(static_cast<int64_t>(t) * p.nHeads + h) * p.headDim + i] = v / total;
    }
}

}  // namespace

void kvWrite(const KvTables& kv, const float* k, const float* v, const int32_t* positions, int64_t nTokens,
             cudaStream_t s) {
    if (nTokens <= 0) return;
    if (kv.q8) {
        const int64_t warps = nTokens * (kv.rowStride / 32);
        kvWriteQ8Kernel<<<static_cast<unsigned>((warps + 7) / 8), 256, 0, s>>>(kv, k, v, positions, nTokens);
        countLaunches(1);
    } else {
        const int64_t n = nTokens * kv.rowStride;
        kvWriteF16Kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(kv, k, v, positions, nTokens);
        countLaunches(1);
    }
}

void attention(const KvTables& kv, const AttentionParams& p, const float* q, const int32_t* positions, int64_t nTokens,
               float* partial, float* out, cudaStream_t s) {
    if (nTokens <= 0) return;
    const dim3 grid(static_cast<unsigned>(p.nHeads), static_cast<unsigned>(nTokens), static_cast<unsigned>(p.nSplits));
    attentionSplitKernel<<<grid, 32, 0, s>>>(kv, p, q, positions, partial);
    attentionMergeKernel<<<dim3(static_cast<unsigned>(p.nHeads), static_cast<unsigned>(nTokens)), 128, 0, s>>>(
        p, partial, out);
    countLaunches(2);
}

}  // namespace hearth::cuda
