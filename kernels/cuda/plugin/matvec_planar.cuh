// The planar mat-vec's per-thread work (ops_matvec.cu: matvecPlanarKernel), host-callable too so
// that test_cuda_block_math runs a whole launch on the CPU (every block and thread, the warp and
// block sums emulated) and checks the indexing — which matrix and rows a block takes, which
// blocks a thread reads, the activations it pairs them with — on machines without a GPU.
// A block of kPlanarThreads threads takes kR consecutive rows of one of the jobs' matrices;
// thread i takes 32-element blocks i, i + kPlanarThreads, ... of each row, reading a block's
// quants in one 16-byte load (Q8_0 two), all kR rows' before any arithmetic, and each token's
// activation block once for the kR rows.
#pragma once

#include "kernels/cuda/plugin/device_quants.cuh"
#include "kernels/cuda/plugin/ops.h"

namespace hearth::cuda {

constexpr int kPlanarThreads = 128;

// Sets jobs.firstBlock for kR rows a block; returns the blocks of the launch.
inline unsigned planarBlocks(MatvecJobs& jobs, int rowsPerBlock) {
    unsigned blocks = 0;
    for (int m = 0; m < jobs.count; ++m) {
        jobs.firstBlock[m] = blocks;
        blocks += static_cast<unsigned>((jobs.nRows[m] + rowsPerBlock - 1) / rowsPerBlock);
    }
    return blocks;
}

// The matrix block `block` works on and its first row (fixed indices: on the GPU an indexed
// kernel parameter would go to the stack).
struct PlanarSlot {
    const uint8_t* w = nullptr;
    int64_t nRows = 0;
    float* y = nullptr;
    int64_t r0 = 0;
};
template <int kR>
HEARTH_HD __forceinline__ PlanarSlot planarSlot(const MatvecJobs& jobs, unsigned block) {
    PlanarSlot s{jobs.w[0], jobs.nRows[0], jobs.y[0], 0};
    unsigned first = 0;
    HEARTH_UNROLL
    for (int k = 1; k < kMaxMatvecJobs; ++k)
        if (k < jobs.count && block >= jobs.firstBlock[k])
            s.w = jobs.w[k], s.nRows = jobs.nRows[k], s.y = jobs.y[k], first = jobs.firstBlock[k];
    s.r0 = static_cast<int64_t>(block - first) * kR;
    return s;
}

template <DType kT>
constexpr int kPlanarWords = kT == DType::Q8_0 ? 8 : 4;  // quant words a block

// Every type's thread sums start here: the slot's kR rows (rows past the matrix's end read its
// last row; their sums are not stored) and the sums zeroed.
template <int kR, int kT2>
HEARTH_HD __forceinline__ void startThreadSums(const PlanarSlot& slot, size_t rowSize, const uint8_t* (&rows)[kR],
                                               float (&acc)[kT2][kR]) {
    HEARTH_UNROLL
    for (int rr = 0; rr < kR; ++rr) {
        const int64_t r = slot.r0 + rr < slot.nRows ? slot.r0 + rr : slot.nRows - 1;
        rows[rr] = slot.w + static_cast<size_t>(r) * rowSize;
    }
    HEARTH_UNROLL
    for (int t = 0; t < kT2; ++t) {
        HEARTH_UNROLL
        for (int rr = 0; rr < kR; ++rr) acc[t][rr] = 0.0f;
    }
}

// Q4_K (GGUF's 144-byte super-blocks: d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of
// quants) in units of 32 elements, eight a super-block: unit 2c + h is bytes 16h ... 16h + 15 of
// quant pair c (32 bytes at 16 + 32c), whose low nibbles are elements 16h ... of sub-block 2c and
// whose high nibbles the same of sub-block 2c + 1. A unit's share of the reference's
// (d ad) isum - (dmin ad) msum: its two 16-element integer sums times their sub-blocks' scales,
// and its two bsums times their mins, each as float (the super-block's eight shares summed in
// float, not its integer sums: close to the reference, not its bits).
// Q6_K planar rows (device_quants.cuh) in units of 32 elements, eight a super-block: unit
// 4h + p (half h, part p) is 16 bytes of low bits, ql[64h + 32(p / 2) + 16(p % 2) ...], and the 16
// bytes of high bits beside them, qh[32h + 16(p % 2) ...]: low nibbles are 16 elements of quarter
// p / 2 of half h, high nibbles the same of quarter p / 2 + 2, each 16 with its own scale. A
// unit's share of the reference's (d ad) isum as a float (the eight shares summed in float).
template <int kR, int kT2>
HEARTH_HD __forceinline__ void q6kThreadSums(const PlanarSlot& slot, int64_t nCols, const ActBuffers& a, int nTokens,
                                             int thread, float (&acc)[kT2][kR]) {
    const int64_t nUnits = nCols / 32, ns = nCols / 256;
    const size_t rowSize = static_cast<size_t>(ns) * 210;
    const uint8_t* rows[kR];
    startThreadSums(slot, rowSize, rows, acc);
    for (int64_t unit = thread; unit < nUnits; unit += kPlanarThreads) {
        const int64_t sb = unit / 8;
        const int h = static_cast<int>(unit % 8) / 4, p = static_cast<int>(unit % 4), quarter = p / 2,
                  l0 = 16 * (p % 2);
        const int eLo = 128 * h + 32 * quarter + l0;  // the low nibbles' first element; the high ones' is eLo + 64
        int lo[kR][4], hi[kR][4], scLo[kR], scHi[kR];
        float d[kR];
        HEARTH_UNROLL
        for (int rr = 0; rr < kR; ++rr) {
            const uint8_t* row = rows[rr];
            const int4 ql = load16(row + 128 * sb + 64 * h + 32 * quarter + l0);
            const int4 qh = load16(row + 128 * ns + 64 * sb + 32 * h + l0);
            const int wl[4] = {ql.x, ql.y, ql.z, ql.w}, wh[4] = {qh.x, qh.y, qh.z, qh.w};
            HEARTH_UNROLL
            for (int k = 0; k < 4; ++k) {
                lo[rr][k] = (wl[k] & 0x0F0F0F0F) | (((wh[k] >> (2 * quarter)) & 0x03030303) << 4);
                hi[rr][k] = ((wl[k] >> 4) & 0x0F0F0F0F) | (((wh[k] >> (2 * quarter + 4)) & 0x03030303) << 4);
            }
            scLo[rr] = static_cast<int8_t>(row[192 * ns + 16 * sb + eLo / 16]);
            scHi[rr] = static_cast<int8_t>(row[192 * ns + 16 * sb + eLo / 16 + 4]);
            d[rr] = ldHalf(row + 208 * ns + 2 * sb);
        }
        HEARTH_UNROLL
        for (int t = 0; t < kT2; ++t) {
            if (t >= nTokens) break;
            const int8_t* aq = a.q + t * nCols + sb * 256 + eLo;
            const int4 alo = load16(aq), ahi = load16(aq + 64);
            const int av[8] = {alo.x, alo.y, alo.z, alo.w, ahi.x, ahi.y, ahi.z, ahi.w};
            int saLo = 0, saHi = 0;
            HEARTH_UNROLL
            for (int k = 0; k < 4; ++k) saLo = sum4(av[k], saLo), saHi = sum4(av[4 + k], saHi);
            const float ad = a.d[t * ns + sb];
            HEARTH_UNROLL
            for (int rr = 0; rr < kR; ++rr) {
                int sLo = 0, sHi = 0;
                HEARTH_UNROLL
                for (int k = 0; k < 4; ++k) sLo = dp4a(lo[rr][k], av[k], sLo), sHi = dp4a(hi[rr][k], av[4 + k], sHi);
                acc[t][rr] +=
                    (d[rr] * ad) * static_cast<float>(scLo[rr] * (sLo - 32 * saLo) + scHi[rr] * (sHi - 32 * saHi));
            }
        }
    }
}

template <int kR, int kT2>
HEARTH_HD __forceinline__ void q4kThreadSums(const PlanarSlot& slot, int64_t nCols, const ActBuffers& a, int nTokens,
                                             int thread, float (&acc)[kT2][kR]) {
    const int64_t nUnits = nCols / 32, nSuper = nCols / 256;
    const size_t rowSize = static_cast<size_t>(nSuper) * 144;
    const uint8_t* rows[kR];
    startThreadSums(slot, rowSize, rows, acc);
    for (int64_t unit = thread; unit < nUnits; unit += kPlanarThreads) {
        const int64_t sb = unit / 8;
        const int c = static_cast<int>(unit % 8) / 2, h = static_cast<int>(unit % 2);
        int lo[kR][4], hi[kR][4], sc[kR][2], mn[kR][2];
        float d[kR], dmin[kR];
        HEARTH_UNROLL
        for (int rr = 0; rr < kR; ++rr) {
            const uint8_t* blk = rows[rr] + static_cast<size_t>(sb) * 144;
            const int4 v = load16(blk + 16 + 32 * c + 16 * h);
            const int w[4] = {v.x, v.y, v.z, v.w};
            HEARTH_UNROLL
            for (int k = 0; k < 4; ++k) lo[rr][k] = w[k] & 0x0F0F0F0F, hi[rr][k] = (w[k] >> 4) & 0x0F0F0F0F;
            d[rr] = ldHalf(blk);
            dmin[rr] = ldHalf(blk + 2);
            scaleMinK(blk + 4, 2 * c, sc[rr][0], mn[rr][0]);
            scaleMinK(blk + 4, 2 * c + 1, sc[rr][1], mn[rr][1]);
        }
        HEARTH_UNROLL
        for (int t = 0; t < kT2; ++t) {
            if (t >= nTokens) break;
            const int8_t* aq = a.q + t * nCols + sb * 256 + 64 * c + 16 * h;
            const int4 alo = load16(aq), ahi = load16(aq + 32);
            const int av[8] = {alo.x, alo.y, alo.z, alo.w, ahi.x, ahi.y, ahi.z, ahi.w};
            const float ad = a.d[t * nSuper + sb];
            const int16_t* bs = a.bsums + t * (nCols / 16) + sb * 16;
            const int bsLo = bs[4 * c + h], bsHi = bs[4 * c + 2 + h];
            HEARTH_UNROLL
            for (int rr = 0; rr < kR; ++rr) {
                int sLo = 0, sHi = 0;
                HEARTH_UNROLL
                for (int k = 0; k < 4; ++k) sLo = dp4a(lo[rr][k], av[k], sLo), sHi = dp4a(hi[rr][k], av[4 + k], sHi);
                acc[t][rr] += (d[rr] * ad) * static_cast<float>(sc[rr][0] * sLo + sc[rr][1] * sHi) -
                    (dmin[rr] * ad) * static_cast<float>(mn[rr][0] * bsLo + mn[rr][1] * bsHi);
            }
        }
    }
}

// Thread `thread`'s sums over its blocks, in block order, for the slot's kR rows (rows past the
// matrix's end read its last row; their sums are not stored) and the first nTokens of kT2 tokens.
template <DType kT, int kR, int kT2>
HEARTH_HD __forceinline__ void planarThreadSums(const PlanarSlot& slot, int64_t nCols, const ActBuffers& a, int nTokens,
                                                int thread, float (&acc)[kT2][kR]) {
    if constexpr (kT == DType::Q4_K) return q4kThreadSums<kR, kT2>(slot, nCols, a, nTokens, thread, acc);
    if constexpr (kT == DType::Q6_K) return q6kThreadSums<kR, kT2>(slot, nCols, a, nTokens, thread, acc);
    constexpr bool kFive = kT == DType::Q5_0 || kT == DType::Q5_1;
    constexpr bool kMin = kT == DType::Q4_1 || kT == DType::Q5_1;
    constexpr bool kOffset = kT == DType::Q4_0 || kT == DType::Q5_0;
    constexpr int kWords = kPlanarWords<kT>;
    const int64_t nb = nCols / 32;
    const PlanarPlanes planes = planarPlanes(kT, nb);
    const size_t rowSize = static_cast<size_t>(nb) * (planes.qsBytes + 2 + (kMin ? 2 : 0) + (kFive ? 4 : 0));
    const uint8_t* rows[kR];
    startThreadSums(slot, rowSize, rows, acc);
    for (int64_t b = thread; b < nb; b += kPlanarThreads) {
        int u[kR][8];  // each row's block unpacked once for all the tokens
        float dw[kR], mw[kR];
        HEARTH_UNROLL
        for (int rr = 0; rr < kR; ++rr) {
            const uint8_t* q = rows[rr] + planes.qsBytes * b;
            int w[kWords];
            HEARTH_UNROLL
            for (int k = 0; k < kWords / 4; ++k) {
                const int4 v = load16(q + 16 * k);
                w[4 * k] = v.x, w[4 * k + 1] = v.y, w[4 * k + 2] = v.z, w[4 * k + 3] = v.w;
            }
            dw[rr] = ldHalf(rows[rr] + planes.d + 2 * b);
            mw[rr] = kMin ? ldHalf(rows[rr] + planes.m + 2 * b) : 0.0f;
            const uint32_t qh = kFive ? static_cast<uint32_t>(ld32(rows[rr] + planes.qh + 4 * b)) : 0u;
            unpackPlanar<kT>(w, qh, u[rr]);
        }
        HEARTH_UNROLL
        for (int t = 0; t < kT2; ++t) {
            if (t >= nTokens) break;
            const int8_t* aq = a.q + t * nCols + b * 32;
            const int4 a0 = load16(aq), a1 = load16(aq + 16);
            const int av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float ad = a.d[t * nb + b];
            const float as = kMin ? a.s[t * nb + b] : 0.0f;
            int suma = 0;
            if constexpr (kOffset) {
                HEARTH_UNROLL
                for (int k = 0; k < 8; ++k) suma = sum4(av[k], suma);
            }
            HEARTH_UNROLL
            for (int rr = 0; rr < kR; ++rr) acc[t][rr] += dotPlanar<kT>(u[rr], dw[rr], mw[rr], av, suma, ad, as);
        }
    }
}

}  // namespace hearth::cuda
