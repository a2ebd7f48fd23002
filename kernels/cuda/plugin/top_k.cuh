// Backend::topKRows' selection pieces (ops_topk.cu), host-callable too, so that
// test_cuda_block_math runs the same two-level selection on a CPU against a sort.
//
// A row is cut into chunks of kTopChunk values. The first kernel takes each chunk's k first
// values, the second the row's k first of those: every one of the row's k first is among its
// chunk's k first. Each selection is a radix select on a key per value (four digits of 8 bits
// from the top, a histogram each) that finds the k-th key, then an ordered pass that keeps the
// values above it and, of the values equal to it, the first ones by column — so each chunk's
// selection comes out in column order, and the merge reads the chunks' in column order too.
// With log-sum-exps wanted, each chunk also gives its largest value and the sum of the
// exponentials of its values less that one (TopChunkSum), which the merge combines in chunk order.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef HEARTH_HD
#define HEARTH_HD __host__ __device__
#endif

namespace hearth::cuda {

constexpr int kTopChunk = 4096;  // values a chunk (at least Backend::kMaxTopK)
constexpr int kTopThreads = 256;

// A key whose unsigned order is the values' order; -0 and +0 get one key (the sampler ties them).
HEARTH_HD inline uint32_t topKey(float v) {
    const float f = v == 0.0f ? 0.0f : v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Whether (keyA, a) comes before (keyB, b): the greater key, or the lower column of equal keys.
HEARTH_HD inline bool topBefore(uint32_t keyA, int32_t a, uint32_t keyB, int32_t b) {
    return keyA > keyB || (keyA == keyB && a < b);
}

// One radix step: hist counts the candidate keys by their digit; the digit of the wanted-th
// greatest key among them (wanted >= 1, counted from the top bin), and wanted reduced by the
// keys in greater bins. If hist holds fewer than wanted keys, bin 0 with wanted reduced by all.
HEARTH_HD inline int topRadixBin(const uint32_t* hist, uint32_t& wanted) {
    uint32_t above = 0;
    for (int bin = 255; bin > 0; --bin) {
        if (above + hist[bin] >= wanted) {
            wanted -= above;
            return bin;
        }
        above += hist[bin];
    }
    wanted -= above;
    return 0;
}

// The digit of key at a radix step (shift 24, 16, 8, 0), and whether key is still a candidate
// (its higher digits equal the prefix chosen so far: mask covers them).
HEARTH_HD inline int topDigit(uint32_t key, int shift) { return static_cast<int>((key >> shift) & 255u); }
HEARTH_HD inline bool topCandidate(uint32_t key, uint32_t prefix, uint32_t mask) { return (key & mask) == prefix; }

// The values a chunk of a row of n keeps: min(k, its length).
HEARTH_HD inline int topChunkKept(int64_t n, int chunk, int k) {
    const int64_t left = n - static_cast<int64_t>(chunk) * kTopChunk;
    const int64_t len = left < kTopChunk ? left : kTopChunk;
    return len < k ? static_cast<int>(len) : k;
}

HEARTH_HD inline int topChunks(int64_t n) { return static_cast<int>((n + kTopChunk - 1) / kTopChunk); }

// A chunk's share of its row's log-sum-exp: its largest value m and the sum of exp(v - m) over
// its values, in double.
struct TopChunkSum {
    float max;
    double sum;
};

// The row's log-sum-exp from its chunks' shares: the largest M of their maxima plus the log of
// the sum, in chunk order, of each share rescaled to M (Backend::topKRows' lse; the host's
// logSumExp sums the same exponentials in column order).
HEARTH_HD inline float topLogSumExp(const TopChunkSum* chunks, int nChunks) {
    float m = chunks[0].max;
    for (int c = 1; c < nChunks; ++c) m = chunks[c].max > m ? chunks[c].max : m;
    double sum = 0;
    for (int c = 0; c < nChunks; ++c) sum += chunks[c].sum * exp(static_cast<double>(chunks[c].max) - m);
    return static_cast<float>(m + log(sum));
}

}  // namespace hearth::cuda
