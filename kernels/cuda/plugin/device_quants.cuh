// Device-side reads of GGUF blocks: one element dequantized (embeddings, F16 tiles) and one
// block's dot product with 8-bit activations (dp4a), following kernels/cpu/reference/quants.cpp.
// Blocks are only 2-byte aligned (18-, 22-, 210-byte blocks): 32-bit reads go through halves.
// Host-callable too, so that test_cuda_block_math checks them against the reference on a CPU.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/dtype.h"

#define HEARTH_HD __host__ __device__
#ifdef __CUDA_ARCH__
#define HEARTH_UNROLL _Pragma("unroll")
#else
#define HEARTH_UNROLL
#endif

namespace hearth::cuda {

// __dp4a: the sum of the four signed byte products, plus c.
HEARTH_HD __forceinline__ int dp4a(int a, int b, int c) {
#ifdef __CUDA_ARCH__
    return __dp4a(a, b, c);
#else
    for (int k = 0; k < 4; ++k) c += static_cast<int8_t>(a >> (8 * k)) * static_cast<int8_t>(b >> (8 * k));
    return c;
#endif
}

HEARTH_HD __forceinline__ float bitsToFloat(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

HEARTH_HD __forceinline__ float ldHalf(const uint8_t* p) {
    return __half2float(__ushort_as_half(*reinterpret_cast<const uint16_t*>(p)));
}
HEARTH_HD __forceinline__ int ld32a2(const uint8_t* p) {
    const auto* h = reinterpret_cast<const uint16_t*>(p);
    return static_cast<int>(static_cast<uint32_t>(h[0]) | (static_cast<uint32_t>(h[1]) << 16));
}
HEARTH_HD __forceinline__ int ld32(const void* p) { return *reinterpret_cast<const int*>(p); }
HEARTH_HD __forceinline__ int sum4(int a, int acc) { return dp4a(a, 0x01010101, acc); }

// 16 bytes at p, which must be 16-byte aligned (on the host a misaligned address aborts, so
// that a CPU run of a kernel's per-thread code catches what would be a fault on the GPU).
HEARTH_HD __forceinline__ int4 load16(const void* p) {
#ifdef __CUDA_ARCH__
    return __ldg(static_cast<const int4*>(p));
#else
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) std::abort();
    int4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
#endif
}

// Q4_K/Q5_K: 6-bit scale and min of sub-block j from the 12 packed bytes.
HEARTH_HD __forceinline__ void scaleMinK(const uint8_t* s, int j, int& sc, int& m) {
    if (j < 4) {
        sc = s[j] & 63;
        m = s[j + 4] & 63;
    } else {
        sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

// Element i of a row of type t.
HEARTH_HD inline float dequantOne(DType t, const uint8_t* row, int64_t i) {
    const int64_t b32 = i / 32, j = i % 32, b256 = i / 256, e = i % 256;
    switch (t) {
    case DType::F32: return reinterpret_cast<const float*>(row)[i];
    case DType::F16: return __half2float(__ushort_as_half(reinterpret_cast<const uint16_t*>(row)[i]));
    case DType::BF16: return bitsToFloat(static_cast<uint32_t>(reinterpret_cast<const uint16_t*>(row)[i]) << 16);
    case DType::Q4_0:
    case DType::Q4_1: {
        const int off = t == DType::Q4_0 ? 2 : 4, size = t == DType::Q4_0 ? 18 : 20;
        const uint8_t* b = row + b32 * size;
        const int q = j < 16 ? (b[off + j] & 15) : (b[off + j - 16] >> 4);
        return t == DType::Q4_0 ? static_cast<float>(q - 8) * ldHalf(b)
                                : static_cast<float>(q) * ldHalf(b) + ldHalf(b + 2);
    }
    case DType::Q5_0:
    case DType::Q5_1: {
        const bool one = t == DType::Q5_1;
        const uint8_t* b = row + b32 * (one ? 24 : 22);
        const uint8_t* qh = b + (one ? 4 : 2);
        const uint8_t* qs = qh + 4;
        int q = j < 16 ? (qs[j] & 15) : (qs[j - 16] >> 4);
        q |= ((qh[j / 8] >> (j % 8)) & 1) << 4;
        return one ? static_cast<float>(q) * ldHalf(b) + ldHalf(b + 2) : static_cast<float>(q - 16) * ldHalf(b);
    }
    case DType::Q8_0: {
        const uint8_t* b = row + b32 * 34;
        return static_cast<float>(static_cast<int8_t>(b[2 + j])) * ldHalf(b);
    }
    case DType::Q4_K:
    case DType::Q5_K: {
        const bool five = t == DType::Q5_K;
        const uint8_t* b = row + b256 * (five ? 176 : 144);
        const uint8_t* qs = b + (five ? 48 : 16);
        const int sub = static_cast<int>(e / 32), l = static_cast<int>(e % 32), c = sub / 2;
        int q = (sub % 2) ? (qs[32 * c + l] >> 4) : (qs[32 * c + l] & 15);
        if (five) q |= ((b[16 + l] >> sub) & 1) << 4;
        int sc, m;
        scaleMinK(b + 4, sub, sc, m);
        return (ldHalf(b) * static_cast<float>(sc)) * static_cast<float>(q) - ldHalf(b + 2) * static_cast<float>(m);
    }
    case DType::Q6_K: {
        const uint8_t* b = row + b256 * 210;
        const int half = static_cast<int>(e / 128), r = static_cast<int>(e % 128), quarter = r / 32, l = r % 32;
        const uint8_t* ql = b + 64 * half;
        const uint8_t qh = b[128 + 32 * half + l];
        const int lo = quarter % 2 ? ql[l + 32] : ql[l];
        const int q = ((quarter < 2 ? lo & 15 : lo >> 4) | (((qh >> (2 * quarter)) & 3) << 4)) - 32;
        return (ldHalf(b + 208) * static_cast<float>(static_cast<int8_t>(b[192 + e / 16]))) * static_cast<float>(q);
    }
    default: return 0.0f;
    }
}

// ---- One block's share of a dot product (the reference's per-block formula) ----
// aq: the block's 8-bit activations (4-byte aligned); ad: its scale; as: Q8_1's s.

HEARTH_HD inline float dotQ4_0(const uint8_t* b, const int8_t* aq, float ad) {
    int sumi = 0, suma = 0;
    HEARTH_UNROLL
    for (int k = 0; k < 4; ++k) {
        const int v = ld32a2(b + 2 + 4 * k), alo = ld32(aq + 4 * k), ahi = ld32(aq + 16 + 4 * k);
        sumi = dp4a(v & 0x0F0F0F0F, alo, sumi);
        sumi = dp4a((v >> 4) & 0x0F0F0F0F, ahi, sumi);
        suma = sum4(ahi, sum4(alo, suma));
    }
    return (ldHalf(b) * ad) * static_cast<float>(sumi - 8 * suma);
}

HEARTH_HD inline float dotQ4_1(const uint8_t* b, const int8_t* aq, float ad, float as) {
    int sumi = 0;
    HEARTH_UNROLL
    for (int k = 0; k < 4; ++k) {
        const int v = ld32a2(b + 4 + 4 * k);
        sumi = dp4a(v & 0x0F0F0F0F, ld32(aq + 4 * k), sumi);
        sumi = dp4a((v >> 4) & 0x0F0F0F0F, ld32(aq + 16 + 4 * k), sumi);
    }
    return (ldHalf(b) * ad) * static_cast<float>(sumi) + ldHalf(b + 2) * as;
}

// Bit j..j+3 of qh spread to bit 4 of each byte.
HEARTH_HD __forceinline__ int spreadBits(uint32_t h) {
    return static_cast<int>(((h & 1) << 4) | ((h & 2) << 11) | ((h & 4) << 18) | ((h & 8) << 25));
}

// Q5_0 (offset 16, scale only) and Q5_1 (offset 0, plus the min times s).
template <bool kOne>
HEARTH_HD inline float dotQ5(const uint8_t* b, const int8_t* aq, float ad, float as) {
    const uint8_t* qhp = b + (kOne ? 4 : 2);
    const uint32_t qh = static_cast<uint32_t>(ld32a2(qhp));
    int sumi = 0, suma = 0;
    HEARTH_UNROLL
    for (int k = 0; k < 4; ++k) {
        const int v = ld32a2(qhp + 4 + 4 * k), alo = ld32(aq + 4 * k), ahi = ld32(aq + 16 + 4 * k);
        sumi = dp4a((v & 0x0F0F0F0F) | spreadBits(qh >> (4 * k)), alo, sumi);
        sumi = dp4a(((v >> 4) & 0x0F0F0F0F) | spreadBits(qh >> (16 + 4 * k)), ahi, sumi);
        suma = sum4(ahi, sum4(alo, suma));
    }
    if (kOne) return (ldHalf(b) * ad) * static_cast<float>(sumi) + ldHalf(b + 2) * as;
    return (ldHalf(b) * ad) * static_cast<float>(sumi - 16 * suma);
}

HEARTH_HD inline float dotQ8_0(const uint8_t* b, const int8_t* aq, float ad) {
    int sumi = 0;
    HEARTH_UNROLL
    for (int k = 0; k < 8; ++k) sumi = dp4a(ld32a2(b + 2 + 4 * k), ld32(aq + 4 * k), sumi);
    return (ldHalf(b) * ad) * static_cast<float>(sumi);
}

// Q4_K (144-byte blocks, qs at 16) and Q5_K (176, qh at 16, qs at 48) × Q8_K.
template <bool kFive>
HEARTH_HD inline float dotScaleMinK(const uint8_t* b, const int8_t* aq, float ad, const int16_t* bsums) {
    const uint8_t* qs = b + (kFive ? 48 : 16);
    int isum = 0, msum = 0;
    for (int sub = 0; sub < 8; ++sub) {
        const uint8_t* chunk = qs + 32 * (sub / 2);
        const int shift = 4 * (sub % 2);
        int s = 0;
        HEARTH_UNROLL
        for (int k = 0; k < 8; ++k) {
            int v = (ld32a2(chunk + 4 * k) >> shift) & 0x0F0F0F0F;
            if (kFive) v |= ((ld32a2(b + 16 + 4 * k) >> sub) & 0x01010101) << 4;
            s = dp4a(v, ld32(aq + 32 * sub + 4 * k), s);
        }
        int sc, m;
        scaleMinK(b + 4, sub, sc, m);
        isum += sc * s;
        msum += m * (bsums[2 * sub] + bsums[2 * sub + 1]);
    }
    return (ldHalf(b) * ad) * static_cast<float>(isum) - (ldHalf(b + 2) * ad) * static_cast<float>(msum);
}

HEARTH_HD inline float dotQ6_K(const uint8_t* b, const int8_t* aq, float ad) {
    int isum = 0;
    for (int g = 0; g < 16; ++g) {  // 16-element groups, one scale each
        const int e0 = 16 * g, half = e0 / 128, quarter = (e0 % 128) / 32, l0 = e0 % 32;
        const uint8_t* ql = b + 64 * half + (quarter % 2 ? 32 : 0);
        const uint8_t* qh = b + 128 + 32 * half;
        int s = 0, sa = 0;
        HEARTH_UNROLL
        for (int k = 0; k < 4; ++k) {
            const int l = l0 + 4 * k;
            const int lo = (ld32a2(ql + l) >> (quarter < 2 ? 0 : 4)) & 0x0F0F0F0F;
            const int hi = ((ld32a2(qh + l) >> (2 * quarter)) & 0x03030303) << 4;
            const int a = ld32(aq + e0 + 4 * k);
            s = dp4a(lo | hi, a, s);
            sa = sum4(a, sa);
        }
        isum += static_cast<int>(static_cast<int8_t>(b[192 + g])) * (s - 32 * sa);
    }
    return (ldHalf(b + 208) * ad) * static_cast<float>(isum);
}

// ---- Planar rows: the decode mat-vec's layout of the 32-element block types ----
// packWeight stores each row of a Q4_0, Q4_1, Q5_0, Q5_1 or Q8_0 matrix whose rows are a multiple
// of 256 elements as planes: every block's quants side by side from the row's start (16 bytes a
// block, Q8_0 32), then the Q5 types' high bits (4 bytes a block), then the scales (halves), then
// Q4_1/Q5_1's mins (halves). A row keeps its size (the same bytes, moved), and each row's quant
// plane starts 16-byte aligned, so that a thread reads a block's quants in one or two 16-byte
// loads instead of nine 2-byte ones (GGUF's blocks are 18 to 34 bytes, 2-byte aligned).

// Q4_K rows are taken as GGUF stores them: 144-byte super-blocks (9 × 16 bytes) keep every
// row's quants 16-byte aligned already, so its "planar" rows are the file's. Q6_K rows (210-byte
// super-blocks) become four planes: every super-block's 128 bytes of low bits, then their 64
// bytes of high bits, their 16 scales, their scales d (halves); aligned where a row holds a
// multiple of 8 super-blocks.
HEARTH_HD inline bool planarType(DType t) {
    return t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1 || t == DType::Q8_0 ||
        t == DType::Q4_K || t == DType::Q6_K;
}
HEARTH_HD inline bool planarRows(DType t, int64_t nCols) {
    return planarType(t) && nCols > 0 && nCols % (t == DType::Q6_K ? 2048 : 256) == 0;
}

// Byte offsets of a row's planes for a row of nb blocks (qh and m 0 where the type has none).
struct PlanarPlanes {
    int qsBytes = 16;  // quant bytes a block
    int64_t qh = 0, d = 0, m = 0;
};
HEARTH_HD inline PlanarPlanes planarPlanes(DType t, int64_t nb) {
    PlanarPlanes p;
    p.qsBytes = t == DType::Q8_0 ? 32 : 16;
    const bool five = t == DType::Q5_0 || t == DType::Q5_1;
    const bool min = t == DType::Q4_1 || t == DType::Q5_1;
    p.qh = five ? p.qsBytes * nb : 0;
    p.d = (p.qsBytes + (five ? 4 : 0)) * nb;
    p.m = min ? p.d + 2 * nb : 0;
    return p;
}

// One row of GGUF blocks (src) rewritten as planes (dst, the same size, not overlapping src).
HEARTH_HD inline void toPlanarRow(DType t, const uint8_t* src, int64_t nCols, uint8_t* dst) {
    if (t == DType::Q4_K) {
        for (int64_t i = 0; i < nCols / 256 * 144; ++i) dst[i] = src[i];
        return;
    }
    if (t == DType::Q6_K) {
        const int64_t ns = nCols / 256;
        for (int64_t sb = 0; sb < ns; ++sb) {
            const uint8_t* b = src + 210 * sb;
            for (int k = 0; k < 128; ++k) dst[128 * sb + k] = b[k];
            for (int k = 0; k < 64; ++k) dst[128 * ns + 64 * sb + k] = b[128 + k];
            for (int k = 0; k < 16; ++k) dst[192 * ns + 16 * sb + k] = b[192 + k];
            for (int k = 0; k < 2; ++k) dst[208 * ns + 2 * sb + k] = b[208 + k];
        }
        return;
    }
    const int64_t nb = nCols / 32;
    const PlanarPlanes p = planarPlanes(t, nb);
    const bool five = t == DType::Q5_0 || t == DType::Q5_1;
    const bool min = t == DType::Q4_1 || t == DType::Q5_1;
    const int blockBytes = 2 + (min ? 2 : 0) + (five ? 4 : 0) + p.qsBytes;
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = src + b * blockBytes;
        int at = 0;
        for (int k = 0; k < 2; ++k) dst[p.d + 2 * b + k] = blk[at + k];
        at += 2;
        if (min) {
            for (int k = 0; k < 2; ++k) dst[p.m + 2 * b + k] = blk[at + k];
            at += 2;
        }
        if (five) {
            for (int k = 0; k < 4; ++k) dst[p.qh + 4 * b + k] = blk[at + k];
            at += 4;
        }
        for (int k = 0; k < p.qsBytes; ++k) dst[p.qsBytes * b + k] = blk[at + k];
    }
}

// Element i of a planar row of nCols elements: the value dequantOne gives for the file's row.
HEARTH_HD inline float dequantOnePlanar(DType t, const uint8_t* row, int64_t nCols, int64_t i) {
    if (t == DType::Q4_K) return dequantOne(t, row, i);
    if (t == DType::Q6_K) {  // dequantOne's Q6_K with the planes' offsets
        const int64_t ns = nCols / 256, sb = i / 256, e = i % 256;
        const int half = static_cast<int>(e / 128), r = static_cast<int>(e % 128), quarter = r / 32, l = r % 32;
        const uint8_t* ql = row + 128 * sb + 64 * half;
        const uint8_t qh = row[128 * ns + 64 * sb + 32 * half + l];
        const int lo = quarter % 2 ? ql[l + 32] : ql[l];
        const int q = ((quarter < 2 ? lo & 15 : lo >> 4) | (((qh >> (2 * quarter)) & 3) << 4)) - 32;
        return (ldHalf(row + 208 * ns + 2 * sb) * static_cast<float>(static_cast<int8_t>(row[192 * ns + 16 * sb + e / 16]))) *
            static_cast<float>(q);
    }
    const int64_t nb = nCols / 32, b = i / 32, j = i % 32;
    const PlanarPlanes p = planarPlanes(t, nb);
    const float d = ldHalf(row + p.d + 2 * b);
    const uint8_t* qs = row + p.qsBytes * b;
    if (t == DType::Q8_0) return static_cast<float>(static_cast<int8_t>(qs[j])) * d;
    int q = j < 16 ? (qs[j] & 15) : (qs[j - 16] >> 4);
    if (t == DType::Q5_0 || t == DType::Q5_1) q |= ((row[p.qh + 4 * b + j / 8] >> (j % 8)) & 1) << 4;
    switch (t) {
    case DType::Q4_0: return static_cast<float>(q - 8) * d;
    case DType::Q5_0: return static_cast<float>(q - 16) * d;
    default: return static_cast<float>(q) * d + ldHalf(row + p.m + 2 * b);  // Q4_1, Q5_1
    }
}

// Elements i0 .. i0 + 7 of a row (i0 a multiple of 8; planar: a planar row of nCols), the values
// dequantOne / dequantOnePlanar give, with a block's scales and offsets read once: the F16 tiles of
// a prompt pass (dequantizeToHalf) decode eight elements a thread.
HEARTH_HD inline void dequantEight(DType t, bool planar, const uint8_t* row, int64_t nCols, int64_t i0,
                                   float (&out)[8]) {
    const int64_t b = i0 / 32;
    const int j0 = static_cast<int>(i0 % 32);
    switch (t) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0: {
        const bool one = t == DType::Q4_1 || t == DType::Q5_1, five = t == DType::Q5_0 || t == DType::Q5_1;
        const uint8_t *qs, *qh = nullptr;
        float d, m = 0.0f;
        if (planar) {
            const PlanarPlanes p = planarPlanes(t, nCols / 32);
            d = ldHalf(row + p.d + 2 * b);
            if (one) m = ldHalf(row + p.m + 2 * b);
            qs = row + p.qsBytes * b;
            if (five) qh = row + p.qh + 4 * b;
        } else {
            const int size = t == DType::Q4_0 ? 18
                : t == DType::Q4_1            ? 20
                : t == DType::Q5_0            ? 22
                : t == DType::Q5_1            ? 24
                                              : 34;
            const uint8_t* blk = row + b * size;
            d = ldHalf(blk);
            if (one) m = ldHalf(blk + 2);
            const int at = one ? 4 : 2;
            if (five) qh = blk + at;
            qs = blk + at + (five ? 4 : 0);
        }
        if (t == DType::Q8_0) {
            HEARTH_UNROLL
            for (int k = 0; k < 8; ++k) out[k] = static_cast<float>(static_cast<int8_t>(qs[j0 + k])) * d;
            return;
        }
        const int hbits = five ? qh[j0 / 8] : 0;
        HEARTH_UNROLL
        for (int k = 0; k < 8; ++k) {
            const int j = j0 + k;
            int q = j < 16 ? (qs[j] & 15) : (qs[j - 16] >> 4);
            q |= ((hbits >> k) & 1) << 4;
            if (t == DType::Q4_0) out[k] = static_cast<float>(q - 8) * d;
            else if (t == DType::Q5_0) out[k] = static_cast<float>(q - 16) * d;
            else out[k] = static_cast<float>(q) * d + m;
        }
        return;
    }
    case DType::Q4_K:
    case DType::Q5_K: {
        const bool five = t == DType::Q5_K;
        const uint8_t* blk = row + i0 / 256 * (five ? 176 : 144);
        const uint8_t* qs = blk + (five ? 48 : 16);
        const int e0 = static_cast<int>(i0 % 256), sub = e0 / 32, l0 = e0 % 32, c = sub / 2;
        int sc, mn;
        scaleMinK(blk + 4, sub, sc, mn);
        const float d = ldHalf(blk) * static_cast<float>(sc), m = ldHalf(blk + 2) * static_cast<float>(mn);
        HEARTH_UNROLL
        for (int k = 0; k < 8; ++k) {
            const int l = l0 + k;
            int q = (sub % 2) ? (qs[32 * c + l] >> 4) : (qs[32 * c + l] & 15);
            if (five) q |= ((blk[16 + l] >> sub) & 1) << 4;
            out[k] = d * static_cast<float>(q) - m;
        }
        return;
    }
    case DType::Q6_K: {
        const int64_t ns = nCols / 256, sb = i0 / 256;
        const int e0 = static_cast<int>(i0 % 256), half = e0 / 128, r0 = e0 % 128, quarter = r0 / 32, l0 = r0 % 32;
        const uint8_t* blk = row + sb * 210;
        const uint8_t* ql = planar ? row + 128 * sb + 64 * half : blk + 64 * half;
        const uint8_t* qh = planar ? row + 128 * ns + 64 * sb + 32 * half : blk + 128 + 32 * half;
        const float d = planar ? ldHalf(row + 208 * ns + 2 * sb) : ldHalf(blk + 208);
        const int8_t scale = static_cast<int8_t>(planar ? row[192 * ns + 16 * sb + e0 / 16] : blk[192 + e0 / 16]);
        const float ds = d * static_cast<float>(scale);
        HEARTH_UNROLL
        for (int k = 0; k < 8; ++k) {
            const int l = l0 + k;
            const int lo = quarter % 2 ? ql[l + 32] : ql[l];
            const int q = ((quarter < 2 ? lo & 15 : lo >> 4) | (((qh[l] >> (2 * quarter)) & 3) << 4)) - 32;
            out[k] = ds * static_cast<float>(q);
        }
        return;
    }
    default:
        HEARTH_UNROLL
        for (int k = 0; k < 8; ++k) out[k] = dequantOne(t, row, i0 + k);
    }
}

// A planar block's quants as 8 words of bytes in the activations' order — low nibbles of the 4
// quant words (elements 0-15), then the high ones (16-31), each byte with the Q5 types' fifth
// bit — or Q8_0's 8 words as they are. Once per row and block, whatever the tokens.
template <DType kT>
HEARTH_HD __forceinline__ void unpackPlanar(const int* w, uint32_t qh, int (&u)[8]) {
    if constexpr (kT == DType::Q8_0) {
        HEARTH_UNROLL
        for (int k = 0; k < 8; ++k) u[k] = w[k];
    } else {
        HEARTH_UNROLL
        for (int k = 0; k < 4; ++k) {
            u[k] = w[k] & 0x0F0F0F0F;
            u[4 + k] = (w[k] >> 4) & 0x0F0F0F0F;
            if constexpr (kT == DType::Q5_0 || kT == DType::Q5_1) {
                u[k] |= spreadBits(qh >> (4 * k));
                u[4 + k] |= spreadBits(qh >> (16 + 4 * k));
            }
        }
    }
}

// One unpacked block against one token's activations, the reference's per-block formula (the
// same float operations as dotQ4_0 ... dotQ8_0, so the same bits). u: unpackPlanar's words;
// dw, mw: the block's scale and min; a: the activation block's 8 words; suma: their sum (Q4_0,
// Q5_0); ad, as: the activation block's d and s.
template <DType kT>
HEARTH_HD __forceinline__ float dotPlanar(const int (&u)[8], float dw, float mw, const int* a, int suma, float ad,
                                          float as) {
    int sumi = 0;
    HEARTH_UNROLL
    for (int k = 0; k < 8; ++k) sumi = dp4a(u[k], a[k], sumi);
    if constexpr (kT == DType::Q8_0) return (dw * ad) * static_cast<float>(sumi);
    if constexpr (kT == DType::Q4_0) return (dw * ad) * static_cast<float>(sumi - 8 * suma);
    if constexpr (kT == DType::Q5_0) return (dw * ad) * static_cast<float>(sumi - 16 * suma);
    return (dw * ad) * static_cast<float>(sumi) + mw * as;  // Q4_1, Q5_1
}

}  // namespace hearth::cuda
