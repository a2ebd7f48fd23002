// Prefetches of attention's next KV block, shared by the AVX2 and AVX-512 builds of its loops
// (attention.cpp, attention_avx512.cpp). A block holds every layer, so one layer's next block is
// far away and the hardware's prefetchers miss it; these fetch it while the current one is
// reduced. Internal linkage (static), as softmax_exp_avx2.h: each build keeps its own copy.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/avx2/kernels.h"

namespace hearth::avx2 {

// Dimension-major K: the head's K of the block after the one holding p (headDim * blockSize
// halves, contiguous), unless that block starts at or past end.
static inline void prefetchNextKBlock(const AttentionHead& h, int p, int end) {
    const int next = (p / h.blockSize + 1) * h.blockSize;
    if (next >= end) return;
    const char* k =
        reinterpret_cast<const char*>(h.kBlocks[next / h.blockSize] + static_cast<int64_t>(h.kvOffset) * h.blockSize);
    const int bytes = h.headDim * h.blockSize * static_cast<int>(sizeof(f16_t));
    for (int b = 0; b < bytes; b += 64) _mm_prefetch(k + b, _MM_HINT_T0);
}

// The head's V rows of positions [from, min(end, from + blockSize)), from a block start: rows
// of headDim halves rowStride apart, which need not start on a cache line.
static inline void prefetchVRows(const AttentionHead& h, int from, int end) {
    const int rowBytes = h.headDim * static_cast<int>(sizeof(f16_t));
    const auto* first = reinterpret_cast<const char*>(
        h.vBlocks[from / h.blockSize] + static_cast<int64_t>(from % h.blockSize) * h.rowStride + h.kvOffset);
    for (int r = 0; r < std::min(h.blockSize, end - from); ++r)
        for (int o = 0; o < rowBytes + 63; o += 64)
            _mm_prefetch(first + static_cast<int64_t>(r) * h.rowStride * 2 + std::min(o, rowBytes - 1), _MM_HINT_T0);
}

}  // namespace hearth::avx2
