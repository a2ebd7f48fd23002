// KV writes into device copies of the paged blocks, and attention over them: one block per
// (token, KV head or query head, split of kAttentionSplit positions), each warp a tile of 32 positions whose
// softmax is taken at once, the tiles merged as an online softmax would (Milakov & Gimelshein,
// arXiv 1805.02867), then a pass merging the splits (flash-decoding), so that one long sequence
// spreads over the GPU. Splits are fixed by position, not by the batch.
#include <cfloat>
#include <cstdlib>
#include <string_view>

#include "kernels/cuda/plugin/device_memory.h"
#include "kernels/cuda/plugin/attention_grouped.cuh"
#include "kernels/cuda/plugin/device_quants.cuh"
#include "kernels/cuda/plugin/elementwise.cuh"
#include "kernels/cuda/plugin/ops.h"
#include "kernels/cuda/plugin/warp_reduce.cuh"

namespace hearth::cuda {
namespace {

constexpr int kPerLane = kMaxHeadDim / 32;

__global__ void kvWriteF16Kernel(KvTables layout, KvWriteRows rows, int64_t n) {
    const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (idx >= n * layout.rowStride) return;
    const int64_t t = idx / layout.rowStride, i = idx % layout.rowStride;
    const KvWriteSlot w = kvWriteSlot(rows, layout, t);
    reinterpret_cast<__half*>(rowAt(w.kv.kBlocks, w.kv, w.position))[i] = __float2half_rn(w.k[i]);
    reinterpret_cast<__half*>(rowAt(w.kv.vBlocks, w.kv, w.position))[i] = __float2half_rn(w.v[i]);
}

__global__ void kvWriteQ8Kernel(KvTables layout, KvWriteRows rows, int64_t n) {
    const int64_t warp = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32;
    const int64_t perRow = layout.rowStride / 32;
    if (warp >= n * perRow) return;
    const int64_t t = warp / perRow, b = warp % perRow;
    const int lane = threadIdx.x % 32;
    const KvWriteSlot w = kvWriteSlot(rows, layout, t);
    quantizeQ8Block(w.k + b * 32, rowAt(w.kv.kBlocks, w.kv, w.position) + b * 34, lane);
    quantizeQ8Block(w.v + b * 32, rowAt(w.kv.vBlocks, w.kv, w.position) + b * 34, lane);
}

// Element i of a head's K or V slice (F16 row, or Q8_0 blocks of 34 bytes).
__device__ float kvElement(const uint8_t* head, int i, bool q8) {
    if (!q8) return __half2float(reinterpret_cast<const __half*>(head)[i]);
    const uint8_t* b = head + (i / 32) * 34;
    return static_cast<float>(static_cast<int8_t>(b[2 + i % 32])) * ldHalf(b);
}

// One block of kSplitWarps warps per (head, token, split); warp w takes the split's w-th tile of
// 32 positions. Each lane scores one position of the tile (its whole K row against q in shared
// memory), so 32 rows load at once; the tile's softmax weights are then broadcast lane by lane
// while the lanes sum V across the head's dimensions. The warps' (max, sum, acc) are merged in
// warp order: the result depends on the split's positions only, never on the batch.
// partial layout per (token, head, split): [max, sum, acc[headDim]].

// q · K row over headDim (F16 rows: 16-byte loads, 8 halves each).
__device__ float scoreRow(const uint8_t* kHead, const float* qs, int headDim, bool q8) {
    float dot = 0.0f;
    if (q8) {
        for (int i = 0; i < headDim; ++i) dot += qs[i] * kvElement(kHead, i, true);
        return dot;
    }
    const auto* k8 = reinterpret_cast<const uint4*>(kHead);
#pragma unroll 8
    for (int c = 0; c < headDim / 8; ++c) {
        const uint4 u = k8[c];
        const __half2* h = reinterpret_cast<const __half2*>(&u);
        HEARTH_UNROLL
        for (int j = 0; j < 4; ++j) {
            const float2 f = __half22float2(h[j]);
            dot += qs[8 * c + 2 * j] * f.x + qs[8 * c + 2 * j + 1] * f.y;
        }
    }
    return dot;
}

__global__ void attentionSplitKernel(KvTables layout, AttentionParams p, AttentionRows rows, float* partial) {
    const int h = blockIdx.x, t = blockIdx.y, split = blockIdx.z;
    const RowSlot slot = rowSlot(rows, layout, p, t);
    const KvTables& kv = slot.kv;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int nCtx = slot.position + 1;
    const int first = p.slidingWindow > 0 ? max(0, nCtx - p.slidingWindow) : 0;
    const int begin = max(first, split * kAttentionSplit), end = min(nCtx, (split + 1) * kAttentionSplit);
    const int groupSize = p.nHeads / p.nKvHeads;
    const size_t headOffset = kv.q8 ? static_cast<size_t>((h / groupSize) * p.headDim / 32) * 34
                                    : static_cast<size_t>((h / groupSize) * p.headDim) * 2;
    __shared__ float qs[kMaxHeadDim];
    __shared__ float warpMaxes[kSplitWarps], warpSums[kSplitWarps];
    __shared__ float warpAcc[kSplitWarps][kMaxHeadDim];
    const float* qHead = slot.q + static_cast<int64_t>(h) * p.headDim;
    for (int i = threadIdx.x; i < p.headDim; i += blockDim.x)
        qs[i] = kv.q8 ? qHead[i] : __half2float(__float2half_rn(qHead[i]));  // the F16 reference rounds q
    __syncthreads();

    const int tile = split * kAttentionSplit + 32 * warp;
    const int pos = tile + lane;
    const bool valid = pos >= begin && pos < end;
    float score = -FLT_MAX;
    if (valid) {
        score = scoreRow(rowAt(kv.kBlocks, kv, pos) + headOffset, qs, p.headDim, kv.q8) * p.scale;
        if (p.softcap > 0.0f) score = p.softcap * tanhf(score / p.softcap);
    }
    const float tileMax = warpMax(score);
    const float weight = valid ? expf(score - tileMax) : 0.0f;
    const float tileSum = warpSum(weight);
    float acc[kPerLane];
    HEARTH_UNROLL
    for (int j = 0; j < kPerLane; ++j) acc[j] = 0.0f;
    const int jBegin = max(0, begin - tile), jEnd = min(32, end - tile);  // the same in every lane
#pragma unroll 4
    for (int j = jBegin; j < jEnd; ++j) {
        const float w = __shfl_sync(0xffffffffu, weight, j);
        const uint8_t* vHead = rowAt(kv.vBlocks, kv, tile + j) + headOffset;
        HEARTH_UNROLL
        for (int k = 0; k < kPerLane; ++k)
            if (lane + 32 * k < p.headDim) acc[k] += w * kvElement(vHead, lane + 32 * k, kv.q8);
    }
    if (lane == 0) {
        warpMaxes[warp] = jBegin < jEnd ? tileMax : -FLT_MAX;
        warpSums[warp] = tileSum;
    }
    HEARTH_UNROLL
    for (int k = 0; k < kPerLane; ++k)
        if (lane + 32 * k < p.headDim) warpAcc[warp][lane + 32 * k] = acc[k];
    __syncthreads();

    float splitMax = -FLT_MAX;
    for (int w = 0; w < kSplitWarps; ++w)
        if (warpSums[w] > 0.0f) splitMax = fmaxf(splitMax, warpMaxes[w]);
    float* out = partial + partialOffset(p, t, h, split);
    for (int i = threadIdx.x; i < p.headDim; i += blockDim.x) {
        float v = 0.0f;
        for (int w = 0; w < kSplitWarps; ++w)
            if (warpSums[w] > 0.0f) v += warpAcc[w][i] * expf(warpMaxes[w] - splitMax);
        out[2 + i] = v;
    }
    if (threadIdx.x == 0) {
        float sum = 0.0f;
        for (int w = 0; w < kSplitWarps; ++w)
            if (warpSums[w] > 0.0f) sum += warpSums[w] * expf(warpMaxes[w] - splitMax);
        out[0] = begin < end ? splitMax : -FLT_MAX;
        out[1] = sum;
    }
}

// The same splits and tiles for all the query heads that share a KV head (grouped-query
// attention), one block per (KV head, token, split), F16 caches and head sizes of 32, 64, 128 or
// 256: each K and V row is read once for the kG heads instead of once per head, and V rows by
// whole warps (headDim / 8 lanes a row, 8 halves a lane: two rows of 128 per 16-byte load
// instruction) instead of one 2-byte element a lane. A tile's rows are summed in a fixed order
// (lane by lane within each load, then across the loads' rows), so a token's result still
// depends only on its split's positions, never on the batch. Writes the same partial layout.
template <int kG>
__global__ void attentionGroupedKernel(KvTables layout, AttentionParams p, AttentionRows rows, float* partial) {
    const int kvh = blockIdx.x, t = blockIdx.y, split = blockIdx.z;
    const RowSlot slot = rowSlot(rows, layout, p, t);
    const KvTables& kv = slot.kv;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int headDim = p.headDim;
    const SplitRange r = splitRange(p, slot.position, split);
    const size_t headOffset = static_cast<size_t>(kvh * headDim) * 2;
    __shared__ float qs[kG][kMaxHeadDim];
    __shared__ float warpMaxes[kSplitWarps][kG], warpSums[kSplitWarps][kG];
    __shared__ float warpAcc[kSplitWarps][kG][kMaxHeadDim];
    for (int i = threadIdx.x; i < kG * headDim; i += blockDim.x) {
        const int g = i / headDim, d = i % headDim;
        const float* qHead = slot.q + static_cast<int64_t>(kvh * kG + g) * headDim;
        qs[g][d] = __half2float(__float2half_rn(qHead[d]));  // the F16 reference rounds q
    }
    __syncthreads();

    const int tile = split * kAttentionSplit + 32 * warp;
    const int pos = tile + lane;
    const bool valid = pos >= r.begin && pos < r.end;
    float score[kG];
    if (valid) groupedScores<kG>(kv, headDim, qs, headOffset, pos, score);
    float weight[kG];
    HEARTH_UNROLL
    for (int g = 0; g < kG; ++g) {
        float sc = -FLT_MAX;
        if (valid) {
            sc = score[g] * p.scale;
            if (p.softcap > 0.0f) sc = p.softcap * tanhf(sc / p.softcap);
        }
        const float tileMax = warpMax(sc);
        weight[g] = valid ? expf(sc - tileMax) : 0.0f;
        const float tileSum = warpSum(weight[g]);
        if (lane == 0) {
            warpMaxes[warp][g] = tileMax;
            warpSums[warp][g] = tileSum;
        }
    }
    float acc[kG][8];
    groupedValues<kG>(kv, headDim, headOffset, tile, r, lane,
                      [&](int g, int j) { return __shfl_sync(0xffffffffu, weight[g], j); }, acc);
    // The rows of a load: lanes part, part + lanesPerRow, ... summed in a fixed butterfly.
    const int lanesPerRow = headDim / 8;
    for (int o = lanesPerRow; o < 32; o <<= 1) {
        HEARTH_UNROLL
        for (int g = 0; g < kG; ++g) {
            HEARTH_UNROLL
            for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(0xffffffffu, acc[g][e], o);
        }
    }
    if (lane < lanesPerRow) {  // row 0 of a load: dimensions 8 * lane ... + 7
        HEARTH_UNROLL
        for (int g = 0; g < kG; ++g) {
            HEARTH_UNROLL
            for (int e = 0; e < 8; ++e) warpAcc[warp][g][8 * lane + e] = acc[g][e];
        }
    }
    const bool any = max(r.begin, tile) < min(r.end, tile + 32);
    if (lane == 0 && !any) {
        HEARTH_UNROLL
        for (int g = 0; g < kG; ++g) warpMaxes[warp][g] = -FLT_MAX, warpSums[warp][g] = 0.0f;
    }
    __syncthreads();

    for (int i = threadIdx.x; i < kG * headDim; i += blockDim.x) {
        const int g = i / headDim, d = i % headDim;
        float splitMax = -FLT_MAX;
        for (int w = 0; w < kSplitWarps; ++w)
            if (warpSums[w][g] > 0.0f) splitMax = fmaxf(splitMax, warpMaxes[w][g]);
        float* out = partial + partialOffset(p, t, kvh * kG + g, split);
        float v = 0.0f;
        for (int w = 0; w < kSplitWarps; ++w)
            if (warpSums[w][g] > 0.0f) v += warpAcc[w][g][d] * expf(warpMaxes[w][g] - splitMax);
        out[2 + d] = v;
        if (d == 0) {
            float sum = 0.0f;
            for (int w = 0; w < kSplitWarps; ++w)
                if (warpSums[w][g] > 0.0f) sum += warpSums[w][g] * expf(warpMaxes[w][g] - splitMax);
            out[0] = r.begin < r.end ? splitMax : -FLT_MAX;
            out[1] = sum;
        }
    }
}

// One block per (head, token): merges the splits in split order.
__global__ void attentionMergeKernel(KvTables layout, AttentionParams p, AttentionRows rows, const float* partial) {
    const int h = blockIdx.x, t = blockIdx.y;
    float* out = rowSlot(rows, layout, p, t).out;
    float globalMax = -FLT_MAX;
    for (int sp = 0; sp < p.nSplits; ++sp) globalMax = fmaxf(globalMax, partial[partialOffset(p, t, h, sp)]);
    float total = 0.0f;
    for (int sp = 0; sp < p.nSplits; ++sp) {
        const float* part = partial + partialOffset(p, t, h, sp);
        if (part[1] > 0.0f) total += part[1] * expf(part[0] - globalMax);
    }
    for (int i = threadIdx.x; i < p.headDim; i += blockDim.x) {
        float v = 0.0f;
        for (int sp = 0; sp < p.nSplits; ++sp) {
            const float* part = partial + partialOffset(p, t, h, sp);
            if (part[1] > 0.0f) v += part[2 + i] * expf(part[0] - globalMax);
        }
        out[static_cast<int64_t>(h) * p.headDim + i] = v / total;
    }
}

// HEARTH_CUDA_ATTENTION=heads: one block per query head (attentionSplitKernel) even where the
// grouped kernel applies, for comparisons. Read at every call, so a test can run both.
bool groupedAttentionEnabled() {
    const char* env = std::getenv("HEARTH_CUDA_ATTENTION");
    return env == nullptr || std::string_view(env) != "heads";
}

}  // namespace

void kvWrite(const KvTables& kv, const float* k, const float* v, const int32_t* positions, int64_t nTokens,
             cudaStream_t s) {
    if (nTokens <= 0) return;
    KvWriteRows rows;
    rows.count = 1;
    rows.rowStart[1] = static_cast<int>(nTokens);
    rows.kBlocks[0] = kv.kBlocks, rows.vBlocks[0] = kv.vBlocks;
    rows.k[0] = k, rows.v[0] = v, rows.positions[0] = positions;
    kvWriteRows(kv, rows, s);
}

void kvWriteRows(const KvTables& kv, const KvWriteRows& rows, cudaStream_t s) {
    const int64_t nTokens = rows.count > 0 ? rows.rowStart[rows.count] : 0;
    if (nTokens <= 0) return;
    if (kv.q8) {
        const int64_t warps = nTokens * (kv.rowStride / 32);
        kvWriteQ8Kernel<<<static_cast<unsigned>((warps + 7) / 8), 256, 0, s>>>(kv, rows, nTokens);
    } else {
        const int64_t n = nTokens * kv.rowStride;
        kvWriteF16Kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(kv, rows, nTokens);
    }
    countLaunches(1);
}

void attention(const KvTables& kv, const AttentionParams& p, const float* q, const int32_t* positions, int64_t nTokens,
               float* partial, float* out, cudaStream_t s) {
    if (nTokens <= 0) return;
    AttentionRows rows;
    rows.count = 1;
    rows.rowStart[1] = static_cast<int>(nTokens);
    rows.kBlocks[0] = kv.kBlocks, rows.vBlocks[0] = kv.vBlocks;
    rows.q[0] = q, rows.positions[0] = positions, rows.out[0] = out;
    attentionRows(kv, p, rows, partial, s);
}

void attentionRows(const KvTables& kv, const AttentionParams& p, const AttentionRows& rows, float* partial,
                   cudaStream_t s) {
    const int nRows = rows.count > 0 ? rows.rowStart[rows.count] : 0;
    if (nRows <= 0) return;
    const int group = p.nKvHeads > 0 ? p.nHeads / p.nKvHeads : 0;
    const bool grouped = !kv.q8 && group >= 1 && group <= 8 && p.nHeads == group * p.nKvHeads &&
        (p.headDim == 32 || p.headDim == 64 || p.headDim == 128 || p.headDim == 256) && groupedAttentionEnabled();
    if (grouped) {
        const dim3 grid(static_cast<unsigned>(p.nKvHeads), static_cast<unsigned>(nRows),
                        static_cast<unsigned>(p.nSplits));
        switch (group) {
#define HEARTH_GROUP(G) \
    case G: attentionGroupedKernel<G><<<grid, 32 * kSplitWarps, 0, s>>>(kv, p, rows, partial); break;
            HEARTH_GROUP(1)
            HEARTH_GROUP(2)
            HEARTH_GROUP(3)
            HEARTH_GROUP(4)
            HEARTH_GROUP(5)
            HEARTH_GROUP(6)
            HEARTH_GROUP(7)
            HEARTH_GROUP(8)
#undef HEARTH_GROUP
        }
    } else {
        const dim3 grid(static_cast<unsigned>(p.nHeads), static_cast<unsigned>(nRows),
                        static_cast<unsigned>(p.nSplits));
        attentionSplitKernel<<<grid, 32 * kSplitWarps, 0, s>>>(kv, p, rows, partial);
    }
    attentionMergeKernel<<<dim3(static_cast<unsigned>(p.nHeads), static_cast<unsigned>(nRows)), 128, 0, s>>>(
        kv, p, rows, partial);
    countLaunches(2);
}

}  // namespace hearth::cuda
