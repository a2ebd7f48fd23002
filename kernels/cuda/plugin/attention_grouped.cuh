// The grouped decode attention's per-lane work (ops_attention.cu: attentionGroupedKernel),
// host-callable too so that test_cuda_block_math runs whole launches on the CPU — every block,
// warp and lane through these functions, the warp reductions done in plain loops — and checks
// the indexing (which K and V rows a lane reads, which 8 dimensions of a row, where a split's
// partial result goes) against the reference's attention, on machines without a GPU.
// One block of kSplitWarps warps per (KV head, token, split of kAttentionSplit positions); warp
// w takes the split's w-th tile of 32 positions. Each lane scores one position of the tile for
// the kG query heads that share the KV head; V rows are read by whole warps, headDim / 8 lanes a
// row and 8 halves a lane.
#pragma once

#include "kernels/cuda/plugin/device_quants.cuh"
#include "kernels/cuda/plugin/ops.h"

namespace hearth::cuda {

constexpr int kMaxHeadDim = 256;
constexpr int kSplitWarps = kAttentionSplit / 32;

// The row of a position in paged blocks.
HEARTH_HD __forceinline__ uint8_t* rowAt(uint8_t* const* blocks, const KvTables& kv, int position) {
    return blocks[position / kv.blockSize] + static_cast<size_t>(position % kv.blockSize) * kv.rowBytes;
}

// The two halves of a 32-bit word (the lower one first), as floats.
HEARTH_HD __forceinline__ float2 halvesToFloats(uint32_t bits) {
    float2 f;
    f.x = __half2float(__ushort_as_half(static_cast<unsigned short>(bits & 0xFFFFu)));
    f.y = __half2float(__ushort_as_half(static_cast<unsigned short>(bits >> 16)));
    return f;
}

// The positions [begin, end) a token at `position` attends to within split `split`.
struct SplitRange {
    int begin = 0, end = 0;
};
HEARTH_HD __forceinline__ SplitRange splitRange(const AttentionParams& p, int position, int split) {
    const int nCtx = position + 1;
    const int first = p.slidingWindow > 0 ? (nCtx - p.slidingWindow > 0 ? nCtx - p.slidingWindow : 0) : 0;
    SplitRange r;
    r.begin = first > split * kAttentionSplit ? first : split * kAttentionSplit;
    r.end = nCtx < (split + 1) * kAttentionSplit ? nCtx : (split + 1) * kAttentionSplit;
    return r;
}

// Finds launch row t's call in a KvCalls launch: pick(c) for call 0, then for each later call
// whose rows start at or before t, so the last call picked is t's; returns the row within it.
// Fixed indices (on the GPU an indexed kernel parameter would go to the stack): pick reads the
// call's entries with c a constant of the unrolled loop.
template <class Pick>
HEARTH_HD __forceinline__ int64_t findCall(const KvCalls& calls, int64_t t, Pick pick) {
    int start = 0;
    pick(0);
    HEARTH_UNROLL
    for (int c = 1; c < kMaxKvCalls; ++c)
        if (c < calls.count && t >= calls.rowStart[c]) pick(c), start = calls.rowStart[c];
    return t - start;
}

// What launch row t reads and writes (ops.h: AttentionRows): its call's block tables, its q row
// ([nHeads, headDim]), its position and its out row.
struct RowSlot {
    KvTables kv;
    const float* q = nullptr;
    int position = 0;
    float* out = nullptr;
};
HEARTH_HD __forceinline__ RowSlot rowSlot(const AttentionRows& rows, const KvTables& kv, const AttentionParams& p,
                                          int t) {
    RowSlot s;
    s.kv = kv;
    const int32_t* positions = nullptr;
    const int64_t local = findCall(rows, t, [&](int c) {
        s.kv.kBlocks = rows.kBlocks[c], s.kv.vBlocks = rows.vBlocks[c];
        s.q = rows.q[c], positions = rows.positions[c], s.out = rows.out[c];
    });
    const int64_t rowFloats = static_cast<int64_t>(p.nHeads) * p.headDim;
    s.q += local * rowFloats;
    s.position = positions[local];
    s.out += local * rowFloats;
    return s;
}

// What launch row t of a kvWriteRows launch writes: its call's tables, the K and V rows
// (rowStride floats each) and the position.
struct KvWriteSlot {
    KvTables kv;
    const float* k = nullptr;
    const float* v = nullptr;
    int position = 0;
};
HEARTH_HD __forceinline__ KvWriteSlot kvWriteSlot(const KvWriteRows& rows, const KvTables& kv, int64_t t) {
    KvWriteSlot s;
    s.kv = kv;
    const int32_t* positions = nullptr;
    const int64_t local = findCall(rows, t, [&](int c) {
        s.kv.kBlocks = rows.kBlocks[c], s.kv.vBlocks = rows.vBlocks[c];
        s.k = rows.k[c], s.v = rows.v[c], positions = rows.positions[c];
    });
    s.k += local * kv.rowStride;
    s.v += local * kv.rowStride;
    s.position = positions[local];
    return s;
}

// What warp `warp` of a qkRopeKvWrite launch (ops_elementwise.cu) takes: each launch row's
// nHeads Q heads, then its nKvHeads K heads, then its nKvHeads V heads. Q and K heads are
// normalised and rotated in place (x: where qkRope's warp for that head works); K and V heads
// are then written from src to dst, their head's slice of the row kvWriteRows writes for that
// launch row (F16 halves, or the Q8_0 blocks of 34 bytes: headDim a multiple of 32).
struct RopeWriteJob {
    enum Kind { Q, K, V };
    Kind kind = Q;
    int64_t token = 0;
    float* x = nullptr;  // Q, K
    const float* src = nullptr;  // K (x, after its rotation), V
    uint8_t* dst = nullptr;  // K, V
};
HEARTH_HD __forceinline__ RopeWriteJob ropeWriteJob(float* q, float* k, int nHeads, int nKvHeads, int headDim,
                                                    const KvWriteRows& rows, const KvTables& layout, int64_t warp) {
    RopeWriteJob j;
    const int heads = nHeads + 2 * nKvHeads;
    j.token = warp / heads;
    const int h = static_cast<int>(warp % heads);
    if (h < nHeads) {
        j.x = q + (j.token * nHeads + h) * headDim;
        return j;
    }
    const bool isK = h < nHeads + nKvHeads;
    const int kvh = isK ? h - nHeads : h - nHeads - nKvHeads;
    const KvWriteSlot w = kvWriteSlot(rows, layout, j.token);
    const size_t offset = layout.q8 ? static_cast<size_t>(kvh) * (headDim / 32) * 34
                                    : static_cast<size_t>(kvh) * headDim * sizeof(uint16_t);
    j.kind = isK ? RopeWriteJob::K : RopeWriteJob::V;
    if (isK) j.x = k + (j.token * nKvHeads + kvh) * headDim;
    j.src = isK ? j.x : w.v + static_cast<int64_t>(kvh) * headDim;
    j.dst = rowAt(isK ? w.kv.kBlocks : w.kv.vBlocks, w.kv, w.position) + offset;
    return j;
}

// Where split `split` of (token t, query head h) keeps [max, sum, acc[headDim]].
HEARTH_HD __forceinline__ int64_t partialOffset(const AttentionParams& p, int t, int h, int split) {
    return ((static_cast<int64_t>(t) * p.nHeads + h) * p.nSplits + split) * (p.headDim + 2);
}

// q · K row at `pos` for the kG heads (qs: their q rows, F16-rounded), before the scale.
template <int kG>
HEARTH_HD __forceinline__ void groupedScores(const KvTables& kv, int headDim, const float (*qs)[kMaxHeadDim],
                                             size_t headOffset, int pos, float (&score)[kG]) {
    HEARTH_UNROLL
    for (int g = 0; g < kG; ++g) score[g] = 0.0f;
    const uint8_t* k = rowAt(kv.kBlocks, kv, pos) + headOffset;
#ifdef __CUDA_ARCH__
#pragma unroll 4
#endif
    for (int c = 0; c < headDim / 8; ++c) {
        const int4 u = load16(k + 16 * c);
        const uint32_t words[4] = {static_cast<uint32_t>(u.x), static_cast<uint32_t>(u.y), static_cast<uint32_t>(u.z),
                                   static_cast<uint32_t>(u.w)};
        HEARTH_UNROLL
        for (int j = 0; j < 4; ++j) {
            const float2 f = halvesToFloats(words[j]);
            HEARTH_UNROLL
            for (int g = 0; g < kG; ++g) score[g] += qs[g][8 * c + 2 * j] * f.x + qs[g][8 * c + 2 * j + 1] * f.y;
        }
    }
}

// Lane `lane`'s share of a tile's weighted V sum: in each load, row lane / (headDim / 8) of it and
// dimensions 8 * (lane % (headDim / 8)) ... + 7; acc[g][e] for those dimensions, over the
// tile's positions in [r.begin, r.end). weightOf(g, j): head g's weight of the tile's position j
// (on the GPU a shuffle, so every lane calls it for every j, before skipping a position).
template <int kG, class WeightOf>
HEARTH_HD __forceinline__ void groupedValues(const KvTables& kv, int headDim, size_t headOffset, int tile, SplitRange r,
                                             int lane, const WeightOf& weightOf, float (&acc)[kG][8]) {
    const int lanesPerRow = headDim / 8, rowsPerLoad = 32 / lanesPerRow;
    const int row = lane / lanesPerRow, part = lane % lanesPerRow;
    HEARTH_UNROLL
    for (int g = 0; g < kG; ++g) {
        HEARTH_UNROLL
        for (int e = 0; e < 8; ++e) acc[g][e] = 0.0f;
    }
#ifdef __CUDA_ARCH__
#pragma unroll 4
#endif
    for (int j0 = 0; j0 < 32; j0 += rowsPerLoad) {
        const int j = j0 + row;
        float w[kG];
        HEARTH_UNROLL
        for (int g = 0; g < kG; ++g) w[g] = weightOf(g, j);
        if (tile + j < r.begin || tile + j >= r.end) continue;
        const int4 u = load16(rowAt(kv.vBlocks, kv, tile + j) + headOffset + 16 * part);
        const uint32_t words[4] = {static_cast<uint32_t>(u.x), static_cast<uint32_t>(u.y), static_cast<uint32_t>(u.z),
                                   static_cast<uint32_t>(u.w)};
        HEARTH_UNROLL
        for (int e = 0; e < 4; ++e) {
            const float2 f = halvesToFloats(words[e]);
            HEARTH_UNROLL
            for (int g = 0; g < kG; ++g) {
                acc[g][2 * e] += w[g] * f.x;
                acc[g][2 * e + 1] += w[g] * f.y;
            }
        }
    }
}

}  // namespace hearth::cuda
