// Prefetches of attention's KV, shared by the AVX2 and AVX-512 builds of its loops
// (attention.cpp, attention_avx512.cpp). Deep in a conversation the KV streams from memory, and
// the hardware's prefetchers do not keep up with loops that do this much arithmetic per line
// (SmolLM2 at depth 8,064 read its KV at 14 GB/s on 2 threads with no software prefetch or with
// a block's lines prefetched in one burst, which stalls on the line fill buffers). The loops
// therefore prefetch one line for each line they consume, kPrefetchPositions positions ahead in
// the same head and at the same place in that position's block: a steady stream as far ahead
// as three chunks of sixteen positions, into L2 (kPrefetchHint). Internal linkage (static), as
// softmax_exp_avx2.h: each build keeps its own copy.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/avx2/kernels.h"

namespace hearth::avx2 {

static constexpr int kPrefetchPositions = 48;
// Into L2, not L1: the lines wait there for the loop, and the L1's few fill buffers stay free for
// its own loads. `attention_bench 8064 2 20 30 9 3 64` (SmolLM2's shape from memory, 2 threads,
// Zen 4) read 22.5-24.2 GB/s against 16.7-18.8 with _MM_HINT_T0 (three rounds alternated; T2
// 21.0-21.2, and T1 at 32, 64 or 96 positions 19.4-23.0); in cache the same.
static constexpr auto kPrefetchHint = _MM_HINT_T1;

// Dimension-major K: where the head's K of position p starts (dimension 0 of it in its block;
// dimension i is i * blockSize halves on).
static inline const f16_t* kDimMajorAt(const AttentionHead& h, int p) {
    return h.kBlocks[p / h.blockSize] + static_cast<int64_t>(h.kvOffset) * h.blockSize + p % h.blockSize;
}

// Where the head's F16 V row of position p starts, and how far (in halves) the next position's
// row of the same block lies: token-major rows (rowStride apart), or with vHeadMajor the head's
// rows of a block side by side (headDim apart).
static inline const f16_t* vRowAt(const AttentionHead& h, int p) {
    const int slot = p % h.blockSize;
    return h.vBlocks[p / h.blockSize] + (h.vHeadMajor ? static_cast<int64_t>(h.kvOffset) * h.blockSize + static_cast<int64_t>(slot) * h.headDim
                                                      : static_cast<int64_t>(slot) * h.rowStride + h.kvOffset);
}
static inline int vRowStep(const AttentionHead& h) { return h.vHeadMajor ? h.headDim : h.rowStride; }

// kDimMajorAt(p + kPrefetchPositions), or null when that is at or past both end (the piece's) and
// h.prefetchEnd (the call's: the next piece's first lines are fetched at the end of this one).
static inline const char* kAhead(const AttentionHead& h, int p, int end) {
    const int far = p + kPrefetchPositions;
    if (far >= end && far >= h.prefetchEnd) return nullptr;
    return reinterpret_cast<const char*>(kDimMajorAt(h, far));
}

// The head's V rows kPrefetchPositions ahead of a loop over positions [p, end) in order: step()
// once per position prefetches the row as far ahead, until that is at or past end. A division
// only where the stream enters a new block. In an unnamed namespace, so that its member
// functions have internal linkage like the functions above: an inline member would otherwise be
// one function for the linker, and the AVX-512 build's copy could serve the AVX2 loops.
namespace {
class VRowsAhead {
public:
    VRowsAhead(const AttentionHead& h, int p, int end) : h_(h), far_(p + kPrefetchPositions), end_(end) { seek(); }
    void step() {
        if (far_ >= end_) return;
        // Each line the row touches, once (a row need not start on a line).
        const auto first = reinterpret_cast<uintptr_t>(row_) & ~uintptr_t{63};
        const auto last = reinterpret_cast<uintptr_t>(row_) + h_.headDim * sizeof(f16_t) - 1;
        for (uintptr_t line = first; line <= last; line += 64)
            _mm_prefetch(reinterpret_cast<const char*>(line), kPrefetchHint);
        ++far_;
        if (--left_ == 0) seek();
        else row_ += static_cast<int64_t>(vRowStep(h_)) * static_cast<int>(sizeof(f16_t));
    }

private:
    void seek() {
        if (far_ >= end_) return;
        left_ = h_.blockSize - far_ % h_.blockSize;
        row_ = reinterpret_cast<const char*>(vRowAt(h_, far_));
    }
    const AttentionHead& h_;
    int far_, end_, left_ = 0;
    const char* row_ = nullptr;
};
}  // namespace

}  // namespace hearth::avx2
