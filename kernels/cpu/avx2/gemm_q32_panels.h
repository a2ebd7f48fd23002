// The prefill gemm of the 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0), written once
// and compiled twice: gemm_q32.cpp (AVX2: maddubs/madd) and gemm_q32_vnni.cpp (AVX-VNNI:
// vpdpbusd) include it with their Dot policy. Include ONLY from those two files.
//
// 8 weight rows are unpacked once into a panel where each 32-byte vector holds 4 values of each
// of the 8 rows, so that one broadcast of 4 activation bytes feeds 8 rows and the block sums
// come out one row per lane (no horizontal sums). Integer block sums are exact however they
// are grouped; the float term per block is the reference's expression (quants.h), lane by lane,
// added in block order: each value is bitwise the matrix-vector one. -ffp-contract=off.
//
// A Dot policy provides, for each type T below:
//   template <class T, int NT> static void addBlock(const PanelBlock&, const ActBlock* a, __m256* acc);
//     for tokens t < NT: the exact Σ w·a of block a[t] against the panel block, one row per
//     lane, and acc[t] += its float term (addBlockTerm);
//   template <class T> static uint32_t offsets(__m256i activations);
//     ActBlock::offsets for T (what the integer sums start from to take T::kOffset off).
//   static constexpr bool kUnpacksLazily;
//     when true, also template <class T, int NT> static void addPackedBlock(const uint8_t* block,
//     const ActBlock* a, __m256* acc): addBlock's sums and terms straight from one repacked block
//     (Packed, below) of a type without fifth bits, unpacking each vector as it is needed (the
//     repacked tiles of 1 and 2 tokens use it).
#pragma once

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

// One block of 8 rows: q[k] lane r = values 4k..4k+3 of row r (unsigned; for Q8_0 their
// magnitudes, with the signed values in w); d and m of each row as floats (exact conversions).
struct PanelBlock {
    alignas(32) uint8_t q[8][32];
    alignas(32) float d[8];
    alignas(32) float m[8];
    alignas(32) int8_t w[8][32];  // Q8_0 only
};

// What the tiles need of one (token, block), copied once per batch so that a tile reads one
// stream: the activation bytes, da and sa as floats, and for Q4_0/Q5_0 the offset terms.
struct ActBlock {
    int8_t q[32];
    float d;
    float s;
    uint32_t offsets;  // the offset term of Q4_0/Q5_0, in the Dot policy's form (0 for the others)
    uint32_t unused;
};

// Tokens in groups of kTileTokens (the last one shorter), each group block-major: a tile's
// tokens lie side by side in one short stride. (Token-major rows of 48-byte blocks would put
// a tile's blocks 48·nTokens bytes apart, a stride that maps them to a few L1 sets.)
constexpr int kTileTokens = 6;

struct GroupSpan {
    int64_t first;  // index of (block 0, the token)
    int64_t stride;  // between consecutive blocks of one token: the group's size
};
inline GroupSpan groupSpan(int64_t token, int64_t nTokens, int64_t nBlocks) {
    const int64_t g = token / kTileTokens * kTileTokens;
    const int64_t size = nTokens - g < kTileTokens ? nTokens - g : kTileTokens;
    return {g * nBlocks + (token - g), size};
}

// The weight types: unsigned values u (Q4: 0..15, Q5: 0..31) with weight value u - kOffset, or
// (Q8_0) signed values, whose magnitudes the panel holds with the values beside them.
// kGroup: products per int16 partial sum in the AVX2 policy (gemm_q32.cpp says why).
struct TQ4_0 {
    using W = BlockQ4_0;
    using A = BlockQ8_0;
    static constexpr int kOffset = 8, kGroup = 8;
    static constexpr bool kSigned = false, kHasMin = false, kFifthBits = false;
    static __m256i values(const W& b) { return unpackNibbles32(b.qs); }
};
struct TQ5_0 {
    using W = BlockQ5_0;
    using A = BlockQ8_0;
    static constexpr int kOffset = 16, kGroup = 8;
    static constexpr bool kSigned = false, kHasMin = false, kFifthBits = true;
    static __m256i values(const W& b) { return _mm256_or_si256(unpackNibbles32(b.qs), fifthBits32(b.qh)); }
};
struct TQ4_1 {
    using W = BlockQ4_1;
    using A = BlockQ8_1;
    static constexpr int kOffset = 0, kGroup = 8;
    static constexpr bool kSigned = false, kHasMin = true, kFifthBits = false;
    static __m256i values(const W& b) { return unpackNibbles32(b.qs); }
};
struct TQ5_1 {
    using W = BlockQ5_1;
    using A = BlockQ8_1;
    static constexpr int kOffset = 0, kGroup = 4;
    static constexpr bool kSigned = false, kHasMin = true, kFifthBits = true;
    static __m256i values(const W& b) { return _mm256_or_si256(unpackNibbles32(b.qs), fifthBits32(b.qh)); }
};
struct TQ8_0 {
    using W = BlockQ8_0;
    using A = BlockQ8_0;
    static constexpr int kOffset = 0, kGroup = 1;
    static constexpr bool kSigned = true, kHasMin = false, kFifthBits = false;
    static __m256i values(const W& b) { return load256(b.qs); }
};

template <class T>
float minOf(const typename T::W& b) {
    if constexpr (T::kHasMin) return halfToFloat(b.m);
    else return 0.0f;
}

template <class T>
void packPanel(const MatmulArgs& m, int64_t row0, int64_t nBlocks, PanelBlock* panel) {
    using W = typename T::W;
    const auto* base = static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0) * m.weightRowBytes;
    // The next panel's rows are fetched while this one is packed (small batches, e.g. a
    // speculative verify, are bound by reading the weights, as decode is).
    const size_t span = 8 * m.weightRowBytes, step = (span + nBlocks - 1) / nBlocks;
    for (int64_t b = 0; b < nBlocks; ++b) {
        prefetchSlice(reinterpret_cast<uintptr_t>(base) + span, step, b);
        __m256i v[8];
        for (int r = 0; r < 8; ++r) {
            const W& block = reinterpret_cast<const W*>(base + r * m.weightRowBytes)[b];
            v[r] = T::values(block);
            panel[b].d[r] = halfToFloat(block.d);
            panel[b].m[r] = minOf<T>(block);
        }
        transpose8x8Epi32(v);
        for (int k = 0; k < 8; ++k) {
            if constexpr (T::kSigned) {
                _mm256_store_si256(reinterpret_cast<__m256i*>(panel[b].w[k]), v[k]);
                v[k] = _mm256_sign_epi8(v[k], v[k]);
            }
            _mm256_store_si256(reinterpret_cast<__m256i*>(panel[b].q[k]), v[k]);
        }
    }
}

inline __m256i broadcast4(const int8_t* p) {
    int word;
    std::memcpy(&word, p, 4);
    return _mm256_set1_epi32(word);
}
inline __m256i panelVec(const void* p) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }

// A panel block held in registers (the repacked weights' tiles, below): the same vectors as
// PanelBlock. The Dot policies read either through these accessors.
struct PanelRegs {
    __m256i q[8];
    __m256i w[8];  // Q8_0 only
    __m256 d, m;
};
inline __m256i panelQ(const PanelBlock& pb, int k) { return panelVec(pb.q[k]); }
inline __m256i panelW(const PanelBlock& pb, int k) { return panelVec(pb.w[k]); }
inline __m256 panelD(const PanelBlock& pb) { return _mm256_load_ps(pb.d); }
inline __m256 panelM(const PanelBlock& pb) { return _mm256_load_ps(pb.m); }
inline __m256i panelQ(const PanelRegs& pr, int k) { return pr.q[k]; }
inline __m256i panelW(const PanelRegs& pr, int k) { return pr.w[k]; }
inline __m256 panelD(const PanelRegs& pr) { return pr.d; }
inline __m256 panelM(const PanelRegs& pr) { return pr.m; }

// Weights repacked at load (packRowsQ32): the rows in groups of kPanelRows (the last group
// padded with zero blocks), a group's blocks in order, and each block of the 8 rows stored as
// the panel's vectors before unpacking, so that decode reads one stream, the size of the
// file's blocks, and unpacks it with a few shifts:
//   d of the 8 rows (f16), then for Q4_1/Q5_1 their m (f16);
//   Q4_x, Q5_x: 4 vectors of 32 bytes, vector j lane r = bytes qs[4j, 4j + 4) of row r: their
//     low nibbles are panel vector j (values 4j..4j+3), their high nibbles panel vector j + 4;
//   Q5_x, then: 4 quads of 8 bytes, byte r of quad j = bits 4j..4j+3 of row r's qh in its low
//     half and bits 16+4j..16+4j+3 in its high half (the fifth bits of those two vectors);
//   Q8_0: 8 vectors, vector k lane r = qs[4k, 4k + 4) of row r (signed).
template <class T>
struct Packed {
    static constexpr size_t kScaleBytes = T::kHasMin ? 32 : 16;
    static constexpr size_t kValueBytes = T::kSigned ? 256 : 128 + (T::kFifthBits ? 32 : 0);
    static constexpr size_t kBytes = kScaleBytes + kValueBytes;  // one block of 8 rows
};

// Decode streams the packed weights from memory, and with this much arithmetic per line the
// hardware's prefetchers alone fall behind, as they do in attention (attention_prefetch.h): the
// 1.1B Q4_0's 65,536 x 4,096 rows read 10.8 GB/s on one thread without software prefetch,
// 13.3 with it. The tiles therefore prefetch, for each block they read, the block
// kDecodeAheadBytes on in the same stream (running on into the next group, which follows in
// memory, near a group's end). 2 KiB measured best end to end on 2 threads (1, 3 and 4 KiB slower).
template <class T>
inline constexpr int64_t kAheadBlocks = (kDecodeAheadBytes + static_cast<int64_t>(Packed<T>::kBytes) - 1) /
    static_cast<int64_t>(Packed<T>::kBytes);
template <class T>
inline void prefetchBlock(const uint8_t* block) {
    for (size_t o = 0; o < Packed<T>::kBytes; o += 64)
        _mm_prefetch(reinterpret_cast<const char*>(block + o), _MM_HINT_T0);
}

// Group g's blocks from the file's rows (rows beyond nRows as zero blocks).
template <class T>
void packGroup(const uint8_t* rows, size_t rowBytes, int64_t nRows, int64_t nBlocks, int64_t g, uint8_t* out) {
    using W = typename T::W;
    constexpr size_t kScales = Packed<T>::kScaleBytes;
    static const W kZero{};
    const W* src[kPanelRows];
    for (int r = 0; r < kPanelRows; ++r) {
        const int64_t row = g * kPanelRows + r;
        src[r] = row < nRows ? reinterpret_cast<const W*>(rows + static_cast<size_t>(row) * rowBytes) : nullptr;
    }
    for (int64_t b = 0; b < nBlocks; ++b) {
        uint8_t* o = out + static_cast<size_t>(g * nBlocks + b) * Packed<T>::kBytes;
        for (int r = 0; r < kPanelRows; ++r) {
            const W& block = src[r] ? src[r][b] : kZero;
            std::memcpy(o + 2 * r, &block.d, 2);
            if constexpr (T::kHasMin) std::memcpy(o + 16 + 2 * r, &block.m, 2);
            uint8_t* q = o + kScales;
            if constexpr (T::kSigned) {
                for (int k = 0; k < 8; ++k) std::memcpy(q + 32 * k + 4 * r, block.qs + 4 * k, 4);
            } else {
                for (int j = 0; j < 4; ++j) std::memcpy(q + 32 * j + 4 * r, block.qs + 4 * j, 4);
                if constexpr (T::kFifthBits) {
                    uint32_t qh;
                    std::memcpy(&qh, block.qh, 4);
                    for (int j = 0; j < 4; ++j)
                        q[128 + 8 * j + r] =
                            static_cast<uint8_t>(((qh >> (4 * j)) & 15u) | (((qh >> (16 + 4 * j)) & 15u) << 4));
                }
            }
        }
    }
}

// Row `row`'s blocks back from its group (packGroup's inverse).
template <class T>
void unpackRow(const uint8_t* packed, int64_t nBlocks, int64_t row, uint8_t* out) {
    using W = typename T::W;
    const int64_t g = row / kPanelRows;
    const int r = static_cast<int>(row % kPanelRows);
    for (int64_t b = 0; b < nBlocks; ++b) {
        const uint8_t* o = packed + static_cast<size_t>(g * nBlocks + b) * Packed<T>::kBytes;
        W block{};
        std::memcpy(&block.d, o + 2 * r, 2);
        if constexpr (T::kHasMin) std::memcpy(&block.m, o + 16 + 2 * r, 2);
        const uint8_t* q = o + Packed<T>::kScaleBytes;
        if constexpr (T::kSigned) {
            for (int k = 0; k < 8; ++k) std::memcpy(block.qs + 4 * k, q + 32 * k + 4 * r, 4);
        } else {
            for (int j = 0; j < 4; ++j) std::memcpy(block.qs + 4 * j, q + 32 * j + 4 * r, 4);
            if constexpr (T::kFifthBits) {
                uint32_t qh = 0;
                for (int j = 0; j < 4; ++j) {
                    const uint32_t byte = q[128 + 8 * j + r];
                    qh |= (byte & 15u) << (4 * j);
                    qh |= (byte >> 4) << (16 + 4 * j);
                }
                std::memcpy(block.qh, &qh, 4);
            }
        }
        std::memcpy(out + static_cast<size_t>(b) * sizeof(W), &block, sizeof(W));
    }
}

// One packed block of 8 rows into the panel's vectors.
template <class T>
inline void unpackPacked(const uint8_t* o, PanelRegs& pr) {
    pr.d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o)));
    pr.m = T::kHasMin ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 16))) : pr.d;
    const uint8_t* q = o + Packed<T>::kScaleBytes;
    if constexpr (T::kSigned) {
        for (int k = 0; k < 8; ++k) {
            pr.w[k] = load256(q + 32 * k);
            pr.q[k] = _mm256_sign_epi8(pr.w[k], pr.w[k]);
        }
    } else {
        const __m256i mask = _mm256_set1_epi8(0x0f);
        for (int j = 0; j < 4; ++j) {
            const __m256i v = load256(q + 32 * j);
            pr.q[j] = _mm256_and_si256(v, mask);
            pr.q[j + 4] = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
            pr.w[j] = pr.w[j + 4] = pr.q[j];  // unused (unsigned types)
        }
        if constexpr (T::kFifthBits) {
            // Each lane's byte to its four bytes, then bit i (low vector) or 4 + i (high) of
            // byte i -> 0x10.
            const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12, 0, 0, 0, 0, 4,
                                                    4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12);
            const __m256i lowBits = _mm256_set1_epi32(0x08040201),
                          highBits = _mm256_set1_epi32(static_cast<int>(0x80402010u));
            const __m256i fifth = _mm256_set1_epi8(0x10);
            for (int j = 0; j < 4; ++j) {
                const __m128i quad = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + 128 + 8 * j));
                const __m256i bytes = _mm256_shuffle_epi8(_mm256_cvtepu8_epi32(quad), spread);
                const __m256i lo = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, lowBits), lowBits);
                const __m256i hi = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, highBits), highBits);
                pr.q[j] = _mm256_or_si256(pr.q[j], _mm256_and_si256(lo, fifth));
                pr.q[j + 4] = _mm256_or_si256(pr.q[j + 4], _mm256_and_si256(hi, fifth));
            }
        }
    }
}

// The panel of rows [row0, row0 + 8) from the packed weights (prefill of repacked weights).
template <class T>
void panelFromPacked(const MatmulArgs& m, int64_t row0, int64_t nBlocks, PanelBlock* panel) {
    const auto* base =
        static_cast<const uint8_t*>(m.packed) + static_cast<size_t>(row0 / kPanelRows * nBlocks) * Packed<T>::kBytes;
    for (int64_t b = 0; b < nBlocks; ++b) {
        PanelRegs pr;
        unpackPacked<T>(base + static_cast<size_t>(b) * Packed<T>::kBytes, pr);
        for (int k = 0; k < 8; ++k) {
            _mm256_store_si256(reinterpret_cast<__m256i*>(panel[b].q[k]), pr.q[k]);
            if constexpr (T::kSigned) _mm256_store_si256(reinterpret_cast<__m256i*>(panel[b].w[k]), pr.w[k]);
        }
        _mm256_store_ps(panel[b].d, pr.d);
        _mm256_store_ps(panel[b].m, T::kHasMin ? pr.m : _mm256_setzero_ps());
    }
}

// acc += the reference's float term of one block for one token, lane by lane (8 rows):
// (dw*da)*isum, plus mw*sa for the types with a min.
template <class T, class PB>
inline void addBlockTerm(__m256& acc, __m256 dw, const PB& pb, const ActBlock& a, __m256i isum) {
    const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(dw, _mm256_broadcast_ss(&a.d)), _mm256_cvtepi32_ps(isum));
    if constexpr (T::kHasMin)
        acc = _mm256_add_ps(acc, _mm256_add_ps(scaled, _mm256_mul_ps(panelM(pb), _mm256_broadcast_ss(&a.s))));
    else acc = _mm256_add_ps(acc, scaled);
}

// NT tokens, whose blocks are a[b * stride + t], against the 8-row panel; y rows row0..row0+7.
template <class T, class Dot, int NT>
void tile(const MatmulArgs& m, const ActBlock* a, int64_t stride, const PanelBlock* panel, int64_t row0, int64_t token0,
          int64_t nBlocks) {
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b, a += stride) Dot::template addBlock<T, NT>(panel[b], a, acc);
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(m.y + (token0 + t) * m.yStride + row0, acc[t]);
}

template <class T, class Dot>
void panelRows(const MatmulArgs& m, const ActBlock* info, int64_t row0, void* scratch) {
    const int64_t nBlocks = m.nCols / kQK;
    auto* panel = static_cast<PanelBlock*>(scratch);
    if (m.packed) panelFromPacked<T>(m, row0, nBlocks, panel);
    else packPanel<T>(m, row0, nBlocks, panel);
    for (int64_t g = 0; g < m.nTokens; g += kTileTokens) {
        const GroupSpan span = groupSpan(g, m.nTokens, nBlocks);
        const ActBlock* group = info + span.first;
        if (span.stride == kTileTokens) {
            tile<T, Dot, kTileTokens>(m, group, span.stride, panel, row0, g, nBlocks);
            continue;
        }
        int64_t t = 0;  // the last, shorter group
        if (span.stride - t >= 4) tile<T, Dot, 4>(m, group + t, span.stride, panel, row0, g + t, nBlocks), t += 4;
        if (span.stride - t >= 2) tile<T, Dot, 2>(m, group + t, span.stride, panel, row0, g + t, nBlocks), t += 2;
        if (span.stride - t >= 1) tile<T, Dot, 1>(m, group + t, span.stride, panel, row0, g + t, nBlocks);
    }
}

// NT tokens (whose blocks are a[b * stride + t]) against the packed group of rows
// [row0, row0 + 8), unpacked block by block in registers: decode and small batches of
// repacked weights. y rows below rowEnd only (the last group's padding is not stored).
template <class T, class Dot, int NT>
void packedTile(const MatmulArgs& m, const ActBlock* a, int64_t stride, int64_t row0, int64_t rowEnd, int64_t token0,
                int64_t nBlocks) {
    const auto* base =
        static_cast<const uint8_t*>(m.packed) + static_cast<size_t>(row0 / kPanelRows * nBlocks) * Packed<T>::kBytes;
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b, a += stride) {
        prefetchBlock<T>(base + static_cast<size_t>(b + kAheadBlocks<T>) * Packed<T>::kBytes);
        if constexpr (Dot::kUnpacksLazily && !T::kFifthBits && NT <= 2) {
            Dot::template addPackedBlock<T, NT>(base + static_cast<size_t>(b) * Packed<T>::kBytes, a, acc);
        } else {
            PanelRegs pr;
            unpackPacked<T>(base + static_cast<size_t>(b) * Packed<T>::kBytes, pr);
            Dot::template addBlock<T, NT>(pr, a, acc);
        }
    }
    for (int t = 0; t < NT; ++t) {
        float* y = m.y + (token0 + t) * m.yStride + row0;
        if (rowEnd - row0 >= kPanelRows) {
            _mm256_storeu_ps(y, acc[t]);
        } else {
            alignas(32) float lanes[8];
            _mm256_store_ps(lanes, acc[t]);
            for (int64_t r = 0; r < rowEnd - row0; ++r) y[r] = lanes[r];
        }
    }
}

template <class T, class Dot>
void packedRows(const MatmulArgs& m, const ActBlock* info, int64_t rowBegin, int64_t rowEnd) {
    const int64_t nBlocks = m.nCols / kQK;
    for (int64_t g = 0; g < m.nTokens; g += kTileTokens) {
        const GroupSpan span = groupSpan(g, m.nTokens, nBlocks);
        const ActBlock* group = info + span.first;
        for (int64_t row0 = rowBegin; row0 < rowEnd; row0 += kPanelRows) {
            switch (span.stride) {
            case 1: packedTile<T, Dot, 1>(m, group, 1, row0, rowEnd, g, nBlocks); break;
            case 2: packedTile<T, Dot, 2>(m, group, 2, row0, rowEnd, g, nBlocks); break;
            case 3: packedTile<T, Dot, 3>(m, group, 3, row0, rowEnd, g, nBlocks); break;
            case 4: packedTile<T, Dot, 4>(m, group, 4, row0, rowEnd, g, nBlocks); break;
            case 5: packedTile<T, Dot, 5>(m, group, 5, row0, rowEnd, g, nBlocks); break;
            default: packedTile<T, Dot, kTileTokens>(m, group, kTileTokens, row0, rowEnd, g, nBlocks); break;
            }
        }
    }
}

template <class T, class Dot>
void actInfo(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, ActBlock* out) {
    const int64_t nBlocks = m.nCols / kQK;
    for (int64_t t = tokenBegin; t < tokenEnd; ++t) {
        const auto* a = reinterpret_cast<const typename T::A*>(static_cast<const uint8_t*>(m.acts) +
                                                               static_cast<size_t>(t) * m.actRowBytes);
        const GroupSpan span = groupSpan(t, m.nTokens, nBlocks);
        for (int64_t b = 0; b < nBlocks; ++b) {
            ActBlock& info = out[span.first + b * span.stride];
            const __m256i q = load256(a[b].qs);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(info.q), q);
            info.d = halfToFloat(a[b].d);
            if constexpr (T::kHasMin) info.s = halfToFloat(a[b].s);
            else info.s = 0.0f;
            info.offsets = Dot::template offsets<T>(q);
            info.unused = 0;
        }
    }
}

// The entry points of kernels.h for one policy.
template <class Dot>
void gemmActInfoWith(const MatmulArgs& m, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    auto* out = static_cast<ActBlock*>(info);
    switch (m.wType) {
    case DType::Q4_0: return actInfo<TQ4_0, Dot>(m, tokenBegin, tokenEnd, out);
    case DType::Q4_1: return actInfo<TQ4_1, Dot>(m, tokenBegin, tokenEnd, out);
    case DType::Q5_0: return actInfo<TQ5_0, Dot>(m, tokenBegin, tokenEnd, out);
    case DType::Q5_1: return actInfo<TQ5_1, Dot>(m, tokenBegin, tokenEnd, out);
    case DType::Q8_0: return actInfo<TQ8_0, Dot>(m, tokenBegin, tokenEnd, out);
    default: return;
    }
}

template <class Dot>
void gemmPanelWith(const MatmulArgs& m, const void* actInfo, int64_t row0, void* scratch) {
    const auto* info = static_cast<const ActBlock*>(actInfo);
    switch (m.wType) {
    case DType::Q4_0: return panelRows<TQ4_0, Dot>(m, info, row0, scratch);
    case DType::Q4_1: return panelRows<TQ4_1, Dot>(m, info, row0, scratch);
    case DType::Q5_0: return panelRows<TQ5_0, Dot>(m, info, row0, scratch);
    case DType::Q5_1: return panelRows<TQ5_1, Dot>(m, info, row0, scratch);
    case DType::Q8_0: return panelRows<TQ8_0, Dot>(m, info, row0, scratch);
    default: return;
    }
}

template <class Dot>
void gemmPackedRowsWith(const MatmulArgs& m, const void* actInfo, int64_t rowBegin, int64_t rowEnd) {
    const auto* info = static_cast<const ActBlock*>(actInfo);
    switch (m.wType) {
    case DType::Q4_0: return packedRows<TQ4_0, Dot>(m, info, rowBegin, rowEnd);
    case DType::Q4_1: return packedRows<TQ4_1, Dot>(m, info, rowBegin, rowEnd);
    case DType::Q5_0: return packedRows<TQ5_0, Dot>(m, info, rowBegin, rowEnd);
    case DType::Q5_1: return packedRows<TQ5_1, Dot>(m, info, rowBegin, rowEnd);
    case DType::Q8_0: return packedRows<TQ8_0, Dot>(m, info, rowBegin, rowEnd);
    default: return;
    }
}

}  // namespace
}  // namespace hearth::avx2
