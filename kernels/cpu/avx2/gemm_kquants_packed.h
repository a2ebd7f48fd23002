// What the K-quant product kernels (gemm_kquants.cpp) and their AVX-512 VNNI build of the
// repacked decode tiles (gemm_kquants_avx512vnni.cpp) share: each type's traits, the byte
// layout of a packed super-block of 8 rows (packGroupK), and the per-batch activation info.
// In an unnamed namespace, as kquant_unpack.h: the two files are built for different
// instruction sets, and each keeps its own copy of every inline function.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/kquant_unpack.h"

namespace hearth::avx2 {
namespace {

// kGroup: maddubs results summed in int16 before a madd (pairs at most 2·63·128 = 16128 for
// Q6_K, 2·31·128 for Q5_K, 2·15·128 for Q4_K: no overflow). kStepsPerScale: 4-value steps
// per scale.
struct TQ4_K {
    using W = BlockQ4_K;
    static constexpr int kGroup = 8, kStepsPerScale = 8, kScales = 8;
    static constexpr bool kHasMins = true, kFifthBits = false;
    // The packed layout (packGroupK): byte offsets in one super-block of 8 rows.
    static constexpr size_t kPackedBytes = 1184, kPD = 0, kPDmin = 16, kPScales = 32, kPMins = 96, kPQs = 160;
    static __m256i chunk(const W& b, int j) { return q4kChunk(b.qs, j); }
    static __m256i scales16(const W& b) { return scalesMins16(b.scales); }
};
struct TQ5_K {
    using W = BlockQ5_K;
    static constexpr int kGroup = 4, kStepsPerScale = 8, kScales = 8;
    static constexpr bool kHasMins = true, kFifthBits = true;
    static constexpr size_t kPackedBytes = 1440, kPD = 0, kPDmin = 16, kPScales = 32, kPMins = 96, kPQs = 160,
                            kPQh = 1184;
    static __m256i chunk(const W& b, int j) { return q5kChunk(b, j); }
    static __m256i scales16(const W& b) { return scalesMins16(b.scales); }
};
struct TQ6_K {
    using W = BlockQ6_K;
    static constexpr int kGroup = 2, kStepsPerScale = 4, kScales = 16;
    static constexpr bool kHasMins = false, kFifthBits = false;
    // 1680 bytes of data and 16 of padding: every value vector 32-byte aligned.
    static constexpr size_t kPackedBytes = 1696, kPQl = 0, kPQh = 1024, kPScales = 1536, kPD = 1664;
    static __m256i chunk(const W& b, int j) { return q6kChunk(b, j); }
    static __m256i scales16(const W& b) { return scalesQ6(b); }
};

// What the tiles need of each (token, super-block) of Q4_K/Q5_K besides its values: the sums
// of the bsums pairs, bsums[2j] + bsums[2j+1] (at most 2·16·128 in magnitude: int16), the
// operand of the min term, computed once per batch rather than once per panel.
struct ActInfoK {
    int16_t pairSums[8];
};

// Decode streams the packed super-blocks from memory: as the 32-block tiles
// (gemm_q32_panels.h), each stream is prefetched kDecodeAheadBytes on, spread over the sub-blocks
// (sub-block g prefetches its share of that super-block's lines) so that the stream runs
// steadily instead of in bursts. A group's super-blocks are followed in memory by the next
// group's, so near a group's end the prefetches run on into the next (prefetches do not fault
// past the end of the copy). Used by every build of the packed decode tiles.
template <class T>
constexpr size_t kAheadSuperBlocks = (static_cast<size_t>(kDecodeAheadBytes) + T::kPackedBytes - 1) / T::kPackedBytes;
template <class T>
inline void prefetchShare(const uint8_t* block, int g) {
    constexpr int kLines = static_cast<int>((T::kPackedBytes + 63) / 64);
    constexpr int kPer = (kLines + T::kScales - 1) / T::kScales;
    for (int l = g * kPer; l < (g + 1) * kPer && l < kLines; ++l)
        _mm_prefetch(reinterpret_cast<const char*>(block + 64 * l), _MM_HINT_T0);
}

}  // namespace
}  // namespace hearth::avx2
