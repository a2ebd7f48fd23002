// Backend::topKRows on the GPU: each chunk's k first values (a block a chunk, the chunk in shared
// memory), then each row's k first of those (a block a row), sorted. The selection pieces are in
// top_k.cuh, where test_cuda_block_math runs them on a CPU.
#include <cuda_runtime.h>

#include "kernels/cuda/plugin/device_memory.h"
#include "kernels/cuda/plugin/ops.h"
#include "kernels/cuda/plugin/top_k.cuh"
#include "kernels/cuda/plugin/warp_reduce.cuh"

namespace hearth::cuda {
namespace {

constexpr int kWarps = kTopThreads / 32;
constexpr int kMaxK = 256;

// The number of this block's threads before this one whose pred is set, and in total (every
// thread of the block calls it; counts: kWarps ints of shared memory).
__device__ int blockCountBefore(bool pred, int* counts, int& total) {
    const unsigned ballot = __ballot_sync(0xffffffffu, pred);
    const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
    if (lane == 0) counts[warp] = __popc(ballot);
    __syncthreads();
    int before = __popc(ballot & ((1u << lane) - 1u));
    total = 0;
    for (int w = 0; w < kWarps; ++w) {
        if (w < warp) before += counts[w];
        total += counts[w];
    }
    __syncthreads();
    return before;
}

// The key of the wanted-th first of the m values load(j, key, id) gives (false: no value at j),
// and how many values equal to it are kept (the first ones by column); every thread calls it.
struct Threshold {
    uint32_t key;
    uint32_t equalKept;
};
template <class Load>
__device__ Threshold selectThreshold(Load load, int m, int wanted) {
    __shared__ uint32_t hist[256];
    __shared__ uint32_t prefix, left;
    if (threadIdx.x == 0) prefix = 0, left = static_cast<uint32_t>(wanted);
    uint32_t mask = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int b = static_cast<int>(threadIdx.x); b < 256; b += kTopThreads) hist[b] = 0;
        __syncthreads();
        const uint32_t p = prefix;
        // Values of a row share their top digits (the sign and exponent): lanes with one bin add
        // together, one atomic a bin a warp instead of one a lane on a few addresses.
        for (int base = 0; base < m; base += kTopThreads) {
            const int j = base + static_cast<int>(threadIdx.x);
            uint32_t key = 0;
            int32_t id;
            const bool counted = j < m && load(j, key, id) && topCandidate(key, p, mask);
            const int bin = counted ? topDigit(key, shift) : -1;
            const unsigned same = __match_any_sync(0xffffffffu, bin);
            if (counted && static_cast<int>(threadIdx.x % 32) == __ffs(same) - 1)
                atomicAdd(&hist[bin], static_cast<uint32_t>(__popc(same)));
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            uint32_t w = left;
            const int bin = topRadixBin(hist, w);
            left = w;
            prefix = p | (static_cast<uint32_t>(bin) << shift);
        }
        mask |= 255u << shift;
        __syncthreads();
    }
    return {prefix, left};
}

// Passes over the m values in column order, store(position, j) for those above t.key and the
// first t.equalKept equal to it: positions 0, 1, ... in column order.
template <class Load, class Store>
__device__ void keepSelected(Load load, int m, Threshold t, int kept, Store store) {
    __shared__ int counts[2][kWarps];
    int taken = 0;
    uint32_t equalSeen = 0;
    for (int base = 0; base < m && taken < kept; base += kTopThreads) {
        const int j = base + static_cast<int>(threadIdx.x);
        uint32_t key = 0;
        int32_t id = 0;
        const bool valid = j < m && load(j, key, id);
        const bool equal = valid && key == t.key;
        int nEqual, nTaken;
        const int equalBefore = blockCountBefore(equal, counts[0], nEqual);
        const bool take = (valid && key > t.key) || (equal && equalSeen + equalBefore < t.equalKept);
        const int at = blockCountBefore(take, counts[1], nTaken);
        if (take) store(taken + at, j);
        taken += nTaken;
        equalSeen += static_cast<uint32_t>(nEqual);
    }
}

// The chunk's share of its row's log-sum-exp (m values in shared memory, all finite): the block's
// largest value, then the sum of exp(v - max) in double, each thread's strided values in column
// order, the lanes by butterfly, the warps in order.
__device__ TopChunkSum chunkSum(const float* values, int m) {
    __shared__ float warpMaxes[kWarps];
    __shared__ double warpSums[kWarps];
    __shared__ TopChunkSum result;
    const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
    float mx = -INFINITY;
    for (int j = static_cast<int>(threadIdx.x); j < m; j += kTopThreads) mx = fmaxf(mx, values[j]);
    mx = warpMax(mx);
    if (lane == 0) warpMaxes[warp] = mx;
    __syncthreads();
    if (threadIdx.x == 0) {
        float all = warpMaxes[0];
        for (int w = 1; w < kWarps; ++w) all = fmaxf(all, warpMaxes[w]);
        result.max = all;
    }
    __syncthreads();
    const double top = result.max;
    double sum = 0;
    for (int j = static_cast<int>(threadIdx.x); j < m; j += kTopThreads)
        sum += exp(static_cast<double>(values[j]) - top);
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) warpSums[warp] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        double all = 0;
        for (int w = 0; w < kWarps; ++w) all += warpSums[w];
        result.sum = all;
    }
    __syncthreads();
    return result;
}

// Grid (chunks, rows): chunk c of row r keeps its topChunkKept values in column order at
// kept[(r * chunks + c) * k]; bad[r * chunks + c] says whether it holds a NaN or an infinity;
// with sums, sums[r * chunks + c] gets its share of the row's log-sum-exp.
__global__ void topChunkKernel(const float* x, int64_t n, int k, TopValue* kept, int* bad, TopChunkSum* sums) {
    const int chunk = static_cast<int>(blockIdx.x), chunks = static_cast<int>(gridDim.x);
    const int64_t row = blockIdx.y, start = static_cast<int64_t>(chunk) * kTopChunk;
    const int m = static_cast<int>(n - start < kTopChunk ? n - start : kTopChunk);
    __shared__ float values[kTopChunk];
    __shared__ int nonFinite;
    if (threadIdx.x == 0) nonFinite = 0;
    __syncthreads();
    const float* xr = x + row * n + start;
    bool ok = true;
    for (int j = static_cast<int>(threadIdx.x); j < m; j += kTopThreads) {
        values[j] = xr[j];
        ok = ok && isfinite(values[j]);
    }
    if (!ok) nonFinite = 1;
    __syncthreads();
    const int want = topChunkKept(n, chunk, k);
    const auto load = [&](int j, uint32_t& key, int32_t& id) {
        key = topKey(values[j]);
        id = static_cast<int32_t>(start + j);
        return true;
    };
    TopValue* out = kept + (row * chunks + chunk) * k;
    keepSelected(load, m, selectThreshold(load, m, want), want, [&](int at, int j) {
        out[at] = {static_cast<int32_t>(start + j), values[j]};
    });
    if (threadIdx.x == 0) bad[row * chunks + chunk] = nonFinite;
    if (sums == nullptr || nonFinite != 0) return;
    const TopChunkSum share = chunkSum(values, m);
    if (threadIdx.x == 0) sums[row * chunks + chunk] = share;
}

// A block a row: the k first of its chunks' kept values, sorted, or out[row * k].id = -1.
__global__ void topMergeKernel(const TopValue* kept, const int* bad, const TopChunkSum* sums, int64_t n, int k,
                               TopValue* out, float* lse) {
    const int64_t row = blockIdx.x;
    const int chunks = topChunks(n);
    __shared__ int nonFinite;
    __shared__ TopValue chosen[kMaxK];
    if (threadIdx.x == 0) nonFinite = 0;
    __syncthreads();
    for (int c = static_cast<int>(threadIdx.x); c < chunks; c += kTopThreads)
        if (bad[row * chunks + c] != 0) nonFinite = 1;
    __syncthreads();
    if (nonFinite != 0) {
        if (threadIdx.x == 0) out[row * k].id = -1;
        return;
    }
    if (lse != nullptr && threadIdx.x == 0) lse[row] = topLogSumExp(sums + row * chunks, chunks);
    const TopValue* rowKept = kept + row * chunks * k;
    const auto load = [&](int j, uint32_t& key, int32_t& id) {
        if (j % k >= topChunkKept(n, j / k, k)) return false;
        key = topKey(rowKept[j].value);
        id = rowKept[j].id;
        return true;
    };
    const int m = chunks * k;
    keepSelected(load, m, selectThreshold(load, m, k), k, [&](int at, int j) { chosen[at] = rowKept[j]; });
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.x); i < k; i += kTopThreads) {
        const uint32_t key = topKey(chosen[i].value);
        int rank = 0;
        for (int j = 0; j < k; ++j) rank += topBefore(topKey(chosen[j].value), chosen[j].id, key, chosen[i].id) ? 1 : 0;
        out[row * k + rank] = chosen[i];
    }
}

}  // namespace

// Scratch: the chunks' kept values, their log-sum-exp shares, their flags.
size_t topKScratchBytes(int64_t nRows, int64_t n, int k) {
    const auto cells = static_cast<size_t>(nRows) * static_cast<size_t>(topChunks(n));
    return cells * static_cast<size_t>(k) * sizeof(TopValue) + cells * sizeof(TopChunkSum) + cells * sizeof(int);
}

void topKRows(const float* x, int64_t nRows, int64_t n, int k, TopValue* out, float* lse, void* scratch,
              cudaStream_t s) {
    if (nRows <= 0) return;
    const int chunks = topChunks(n);
    const size_t cells = static_cast<size_t>(nRows) * static_cast<size_t>(chunks);
    auto* kept = static_cast<TopValue*>(scratch);
    auto* sums = reinterpret_cast<TopChunkSum*>(kept + cells * static_cast<size_t>(k));
    int* bad = reinterpret_cast<int*>(sums + cells);
    topChunkKernel<<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>(nRows)), kTopThreads, 0, s>>>(
        x, n, k, kept, bad, lse != nullptr ? sums : nullptr);
    topMergeKernel<<<static_cast<unsigned>(nRows), kTopThreads, 0, s>>>(kept, bad, sums, n, k, out, lse);
    countLaunches(2);
}

}  // namespace hearth::cuda
