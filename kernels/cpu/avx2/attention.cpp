// AVX2 attention over the paged F16 KV cache, bit for bit the reference's (backend_ref.cpp,
// attendOneHead): q rounded to F16; each q·k a chain of fused multiply-adds in dimension order,
// eight cache positions side by side in the lanes; the weights exp(score - max) by softmaxExp8
// (the reference's softmaxExp on eight lanes) and their sum in eight partial sums; the V sum in
// float, fused multiply-adds in position order, eight dimensions per vector. Several queries over
// the same KV head (a GQA group, consecutive tokens) share one pass over K and V: each K chunk is
// transposed and converted once and each V row converted once for all of them, while every query
// keeps its own order (attendQueries). A Q8_0 cache (attendOneHeadQ8) follows attendOneHeadQ8 of
// the reference: q quantized and q·k by this backend's bitwise-equal quantizeRow/vecDot, an
// online softmax with libm expf, the running V sum in float over rows dequantized as d * q.
#include <math.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "kernels/backend.h"
#include "kernels/cpu/attention_pieces.h"
#include "kernels/cpu/reference/softmax_exp.h"
#include "kernels/cpu/avx2/attention_prefetch.h"
#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/simd.h"
#include "kernels/cpu/avx2/softmax_exp_avx2.h"

namespace hearth::avx2 {
namespace {

inline const f16_t* kvRow(const f16_t* const* blocks, const AttentionHead& h, int p) {
    return blocks[p / h.blockSize] + static_cast<int64_t>(p % h.blockSize) * h.rowStride + h.kvOffset;
}

// Transposes an 8×8 matrix of halves: out[i] holds element i of rows 0..7.
inline void transpose8x8(const __m128i* in, __m128i* out) {
    __m128i a[8], b[8];
    for (int k = 0; k < 4; ++k) {
        a[2 * k] = _mm_unpacklo_epi16(in[2 * k], in[2 * k + 1]);
        a[2 * k + 1] = _mm_unpackhi_epi16(in[2 * k], in[2 * k + 1]);
    }
    for (int k = 0; k < 2; ++k)
        for (int s = 0; s < 2; ++s) {
            b[4 * k + s] = _mm_unpacklo_epi32(a[4 * k + s], a[4 * k + s + 2]);
            b[4 * k + s + 2] = _mm_unpackhi_epi32(a[4 * k + s], a[4 * k + s + 2]);
        }
    // b[0]: dims 0,1 of rows 0-3; b[2]: dims 2,3; b[1]: dims 4,5; b[3]: dims 6,7 (rows 4-7 in b[4..7]).
    const int order[4] = {0, 2, 1, 3};
    for (int k = 0; k < 4; ++k) {
        out[2 * k] = _mm_unpacklo_epi64(b[order[k]], b[order[k] + 4]);
        out[2 * k + 1] = _mm_unpackhi_epi64(b[order[k]], b[order[k] + 4]);
    }
}

// kT[i] = dimension i of the K rows of positions p..p+7, as floats (lane j: position p+j);
// lanes at or past `end` read a row of zeros (the last, partial chunk). With K stored
// dimension-major (p a multiple of 8) each kT[i] is one load: lanes at or past `end`, or before
// the caller's range, read whatever the block holds there, scores no query uses.
// Dimension-major, the same place kPrefetchPositions on is prefetched along the way, a line per
// line read (attention_prefetch.h).
void transposeChunk(const AttentionHead& h, int p, int end, __m256* kT) {
    if (h.kDimMajor) {
        const f16_t* base = kDimMajorAt(h, p);
        const char* ahead = kAhead(h, p, end);
        const int rowBytes = h.blockSize * static_cast<int>(sizeof(f16_t));
        for (int i = 0; i < h.headDim; ++i) {
            if (ahead && (i * rowBytes) % 64 == 0) _mm_prefetch(ahead + i * rowBytes, kPrefetchHint);
            kT[i] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(base + i * h.blockSize)));
        }
        return;
    }
    alignas(16) static constexpr f16_t kZeros[kMaxAttentionHeadDim] = {};
    const f16_t* rows[8];
    for (int j = 0; j < 8; ++j) rows[j] = p + j < end ? kvRow(h.kBlocks, h, p + j) : kZeros;
    for (int i0 = 0; i0 < h.headDim; i0 += 8) {
        __m128i in[8], dims[8];
        for (int j = 0; j < 8; ++j) in[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[j] + i0));
        transpose8x8(in, dims);
        for (int i = 0; i < 8; ++i) kT[i0 + i] = _mm256_cvtph_ps(dims[i]);
    }
}

// For each of nq (at most 4) queries and nc (1 or 2) chunks of 8 positions from p:
// out[r][8c + j] = (Σ_i q_r[i]·k_{p+8c+j}[i]) · scale, a chain of fused multiply-adds in dimension
// order; the nq·nc chains are independent, interleaved only to hide the latency.
template <int nq, int nc>
void scoreChunks(const __m256* const* kT, int headDim, const float* const* q, float scale, float* const* out) {
    __m256 dot[nq][nc];
    for (int r = 0; r < nq; ++r)
        for (int c = 0; c < nc; ++c) dot[r][c] = _mm256_setzero_ps();
    for (int i = 0; i < headDim; ++i)
        for (int r = 0; r < nq; ++r) {
            const __m256 qi = _mm256_broadcast_ss(q[r] + i);
            for (int c = 0; c < nc; ++c) dot[r][c] = _mm256_fmadd_ps(qi, kT[c][i], dot[r][c]);
        }
    for (int r = 0; r < nq; ++r)
        for (int c = 0; c < nc; ++c) _mm256_storeu_ps(out[r] + 8 * c, _mm256_mul_ps(dot[r][c], _mm256_set1_ps(scale)));
}

template <int nc>
void scoreGroup(int nq, const __m256* const* kT, int headDim, const float* const* q, float scale, float* const* out) {
    if (nq == 4) scoreChunks<4, nc>(kT, headDim, q, scale, out);
    else if (nq == 3) scoreChunks<3, nc>(kT, headDim, q, scale, out);
    else if (nq == 2) scoreChunks<2, nc>(kT, headDim, q, scale, out);
    else scoreChunks<1, nc>(kT, headDim, q, scale, out);
}

inline const uint8_t* kvRowQ8(const f16_t* const* blocks, const AttentionHead& h, int p) {
    const size_t rowSize = static_cast<size_t>(h.rowStride / kQK) * sizeof(BlockQ8_0);
    const size_t headOffset = static_cast<size_t>(h.kvOffset / kQK) * sizeof(BlockQ8_0);
    return reinterpret_cast<const uint8_t*>(blocks[p / h.blockSize]) + static_cast<size_t>(p % h.blockSize) * rowSize +
        headOffset;
}

// accum = accum + (f32(q) * d) * w over one Q8_0 row of the head.
inline void addWeightedVQ8(float* accum, const uint8_t* row, int headDim, __m256 w) {
    const auto* blocks = reinterpret_cast<const BlockQ8_0*>(row);
    for (int b = 0; b < headDim / kQK; ++b) {
        BlockQ8_0 block;
        std::memcpy(&block, blocks + b, sizeof block);  // rows are only 2-byte aligned
        const __m256 d = _mm256_set1_ps(halfToFloat(block.d));
        for (int i = 0; i < kQK; i += 8) {
            const __m128i q8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block.qs + i));
            const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8)), d);
            float* a = accum + b * kQK + i;
            _mm256_storeu_ps(a, _mm256_add_ps(_mm256_loadu_ps(a), _mm256_mul_ps(v, w)));
        }
    }
}

// One query's partial over positions [a, b) of a Q8_0 cache (q already quantized): an online
// softmax with libm expf, the running V sum in float over rows dequantized as d * q.
void pieceQ8(const AttentionHead& h, const BlockQ8_0* q, int a, int b, float* scores, AttentionPartial& part) {
    float* accum = part.acc;
    for (int i = 0; i < h.headDim; i += 8) _mm256_store_ps(accum + i, _mm256_setzero_ps());
    for (int p = a; p < b; ++p)
        scores[p - a] = softcapScore(vecDot(DType::Q8_0, kvRowQ8(h.kBlocks, h, p), q, h.headDim) * h.scale, h.softcap);
    float runningMax = -INFINITY, runningSum = 0.0f;
    for (int p = a; p < b; ++p) {
        const float score = scores[p - a];
        float accumScale = 1.0f, weight = 1.0f;
        if (score > runningMax) {
            accumScale = expf(runningMax - score);
            runningMax = score;
            for (int i = 0; i < h.headDim; i += 8)
                _mm256_store_ps(accum + i, _mm256_mul_ps(_mm256_load_ps(accum + i), _mm256_set1_ps(accumScale)));
        } else {
            weight = expf(score - runningMax);
        }
        addWeightedVQ8(accum, kvRowQ8(h.vBlocks, h, p), h.headDim, _mm256_set1_ps(weight));
        runningSum = runningSum * accumScale + weight;
    }
    part.count = b - a, part.max = runningMax, part.sum = runningSum;
}

// scoreChunks for dimension-major K with the chunks read where they lie, as the AVX-512 build's
// scoreChunks16 does: chunk c's dimension i is one load at k[c] + i * blockSize, converted as
// the fused multiply-adds need it (the same chains, so the same bits). transposeChunk's copy
// costs a 256-bit store per dimension and chunk, and a CPU with one such store a cycle (AMD
// Zen 3) spent more on those than on the arithmetic. Each chunk prefetches a line kAhead on for
// each line it reads (ahead[c]; null: nothing), dims dimensions at a time, dims the dimensions a
// line holds (blocks of 16 positions: 2), so that the loop has no branch but its own.
template <int nq, int nc, int dims>
void scoreChunksDimMajor(const f16_t* const* k, const char* const* ahead, const char* const* vAhead, int blockSize,
                         int headDim, const float* const* q, float scale, float* const* out) {
    const int rowBytes = blockSize * static_cast<int>(sizeof(f16_t));
    const char* pf[nc];  // a chunk with nothing ahead prefetches its own lines: in cache, harmless
    for (int c = 0; c < nc; ++c) pf[c] = ahead[c] ? ahead[c] : reinterpret_cast<const char*>(k[c]);
    __m256 dot[nq][nc];
    for (int r = 0; r < nq; ++r)
        for (int c = 0; c < nc; ++c) dot[r][c] = _mm256_setzero_ps();
    for (int i0 = 0; i0 < headDim; i0 += dims) {
        for (int c = 0; c < nc; ++c) _mm_prefetch(pf[c] + i0 * rowBytes, kPrefetchHint);
        // The chunk's V rows (8 positions' head-major rows: 16 halves per dimension of K read).
        if constexpr (dims > 1)
            if ((i0 * 16) % 64 == 0)
                for (int c = 0; c < nc; ++c)
                    if (vAhead[c]) _mm_prefetch(vAhead[c] + i0 * 16, kPrefetchHint);
        for (int i = i0; i < i0 + dims; ++i) {
            __m256 kc[nc];
            for (int c = 0; c < nc; ++c)
                kc[c] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(k[c] + i * blockSize)));
            for (int r = 0; r < nq; ++r) {
                const __m256 qi = _mm256_broadcast_ss(q[r] + i);
                for (int c = 0; c < nc; ++c) dot[r][c] = _mm256_fmadd_ps(qi, kc[c], dot[r][c]);
            }
        }
    }
    for (int r = 0; r < nq; ++r)
        for (int c = 0; c < nc; ++c) _mm256_storeu_ps(out[r] + 8 * c, _mm256_mul_ps(dot[r][c], _mm256_set1_ps(scale)));
}

// scoreChunksDimMajor with dims for the block size: the dimensions one 64-byte line holds (8
// positions' rows: 4, 16: 2), else one; headDim is a multiple of 8.
template <int nq, int nc>
void scoreChunksDimMajor(const f16_t* const* k, const char* const* ahead, const char* const* vAhead, int blockSize,
                         int headDim, const float* const* q, float scale, float* const* out) {
    if (blockSize == 16) scoreChunksDimMajor<nq, nc, 2>(k, ahead, vAhead, blockSize, headDim, q, scale, out);
    else if (blockSize == 8) scoreChunksDimMajor<nq, nc, 4>(k, ahead, vAhead, blockSize, headDim, q, scale, out);
    else scoreChunksDimMajor<nq, nc, 1>(k, ahead, vAhead, blockSize, headDim, q, scale, out);
}

// scoreQueries for at most four queries over dimension-major K: chunks in threes (two for four
// queries, whose twelve sums would leave too few registers for the chunks), read in place.
// Groups of up to eight queries (TinyLlama's GQA 8) take it four at a time, converting each chunk
// once per four: attention_bench at depth 512, 1 thread, 1.9-2.1 ms a step against 2.2-2.6
// through the shared copy (2 threads and depth 4,096 within the host's noise).
template <int nq>
void scoreQueriesDimMajor(const AttentionHead& h, const float* q, int lo, int hi, int stride, float* scores) {
    constexpr int kStep = nq == 4 ? 2 : 3;
    const float* qs[nq];
    for (int r = 0; r < nq; ++r) qs[r] = q + r * kMaxAttentionHeadDim;
    for (int p = lo; p < hi; p += 8 * kStep) {
        const int nc = std::min(kStep, (hi - p + 7) / 8);
        const f16_t* k[kStep];
        const char* ahead[kStep];
        // The chunk's own V rows too, for the V pass (as scoreQueriesAvx512): attention_bench 8064
        // 2 10 with HEARTH_CPU=avx2-vnni on the Xeon, seven alternations: 16.8-18.0 GB/s before,
        // 18.7-20.4 after (one thread 8.5 -> 9.1).
        const char* vAhead[kStep];
        for (int c = 0; c < nc; ++c) {
            const int x = p + 8 * c;
            k[c] = kDimMajorAt(h, x);
            ahead[c] = kAhead(h, x, hi);
            vAhead[c] = h.vHeadMajor && x < hi ? reinterpret_cast<const char*>(vRowAt(h, x)) : nullptr;
        }
        float* outs[nq];
        for (int r = 0; r < nq; ++r) outs[r] = scores + r * stride + (p - lo);
        if (nc == kStep) scoreChunksDimMajor<nq, kStep>(k, ahead, vAhead, h.blockSize, h.headDim, qs, h.scale, outs);
        else if (nc == 2) scoreChunksDimMajor<nq, 2>(k, ahead, vAhead, h.blockSize, h.headDim, qs, h.scale, outs);
        else scoreChunksDimMajor<nq, 1>(k, ahead, vAhead, h.blockSize, h.headDim, qs, h.scale, outs);
    }
}

// A query's row of scores: the span rounded up to whole 8-position chunks.
inline int scoreStride(int lo, int hi) { return (hi - lo + 7) & ~7; }

// Scores of every query over the union [lo, hi) of their ranges: scores[r * stride + p - lo]
// (the last chunk's unused lanes too, scores of rows of zeros). Positions outside a query's
// own range are computed too (the union is contiguous, so they are cache positions of another
// query) and never read. Three chunks of eight positions at a time: with the queries, enough
// independent chains of fused multiply-adds to keep both FMA units busy.
void scoreQueries(const AttentionHead& h, const float* q, int n, int lo, int hi, int stride, float* scores) {
    if (h.kDimMajor && n <= 8) {
        for (int r0 = 0; r0 < n; r0 += 4) {
            const float* qr = q + r0 * kMaxAttentionHeadDim;
            float* sr = scores + r0 * stride;
            switch (std::min(4, n - r0)) {
            case 4: scoreQueriesDimMajor<4>(h, qr, lo, hi, stride, sr); break;
            case 3: scoreQueriesDimMajor<3>(h, qr, lo, hi, stride, sr); break;
            case 2: scoreQueriesDimMajor<2>(h, qr, lo, hi, stride, sr); break;
            default: scoreQueriesDimMajor<1>(h, qr, lo, hi, stride, sr); break;
            }
        }
        return;
    }
    alignas(32) __m256 kT0[kMaxAttentionHeadDim], kT1[kMaxAttentionHeadDim], kT2[kMaxAttentionHeadDim];
    const __m256* const kT[3] = {kT0, kT1, kT2};
    __m256* const fill[3] = {kT0, kT1, kT2};
    for (int p = lo; p < hi; p += 24) {
        const int nc = std::min(3, (hi - p + 7) / 8);  // chunks of positions in this step
        for (int c = 0; c < nc; ++c) transposeChunk(h, p + 8 * c, hi, fill[c]);
        for (int r0 = 0; r0 < n; r0 += 4) {
            const float* qs[4];
            float* outs[4];
            const int m = std::min(4, n - r0);
            for (int k = 0; k < m; ++k) {
                qs[k] = q + (r0 + k) * kMaxAttentionHeadDim;
                outs[k] = scores + (r0 + k) * stride + (p - lo);
            }
            if (nc == 3) scoreGroup<3>(m, kT, h.headDim, qs, h.scale, outs);
            else if (nc == 2) scoreGroup<2>(m, kT, h.headDim, qs, h.scale, outs);
            else scoreGroup<1>(m, kT, h.headDim, qs, h.scale, outs);
        }
    }
}

// Lanes [0, count) set (count < 8: the last, partial chunk of a query's range).
inline __m256i laneMask(int count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The reference's order of the eight partial sums: ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)).
inline float laneSum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}

// One query's scores s[0, len) (its own range within a piece) become its softmax weights
// exp(s - max) in place; returns their sum, kept in eight partial sums by position mod 8 from
// the range's start, and the max in *maxOut.
float softmaxWeights(float* s, int len, float* maxOut) {
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    for (int j = 0; j < len; j += 8) {
        const __m256 x = len - j >= 8 ? _mm256_loadu_ps(s + j) : _mm256_maskload_ps(s + j, laneMask(len - j));
        const __m256 live = _mm256_castsi256_ps(laneMask(len - j));
        vmax = _mm256_max_ps(_mm256_blendv_ps(_mm256_set1_ps(-INFINITY), x, live), vmax);
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    *maxOut = _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
    const __m256 maxScore = _mm256_set1_ps(*maxOut);
    __m256 sum = _mm256_setzero_ps();
    for (int j = 0; j < len; j += 8) {
        const __m256i live = laneMask(len - j);
        const __m256 x = len - j >= 8 ? _mm256_loadu_ps(s + j) : _mm256_maskload_ps(s + j, live);
        const __m256 w = _mm256_and_ps(softmaxExp8(_mm256_sub_ps(x, maxScore)), _mm256_castsi256_ps(live));
        sum = _mm256_add_ps(sum, w);
        if (len - j >= 8) _mm256_storeu_ps(s + j, w);
        else _mm256_maskstore_ps(s + j, live, w);
    }
    return laneSum(sum);
}

// acc[0, 8 * nv) += w[p] * v[p] for p in [0, count), in position order (v: rows of vStride floats).
template <int nv>
void accumulateRows(const float* v, int vStride, const float* w, int count, float* acc) {
    __m256 a[nv];
    for (int k = 0; k < nv; ++k) a[k] = _mm256_loadu_ps(acc + 8 * k);
    for (int p = 0; p < count; ++p) {
        const __m256 wp = _mm256_broadcast_ss(w + p);
        for (int k = 0; k < nv; ++k) a[k] = _mm256_fmadd_ps(wp, _mm256_loadu_ps(v + p * vStride + 8 * k), a[k]);
    }
    for (int k = 0; k < nv; ++k) _mm256_storeu_ps(acc + 8 * k, a[k]);
}

void accumulateSpan(const float* v, int headDim, const float* w, int count, float* acc) {
    for (int d = 0; d < headDim; d += 64) {
        switch (std::min(8, (headDim - d) / 8)) {
        case 8: accumulateRows<8>(v + d, headDim, w, count, acc + d); break;
        case 7: accumulateRows<7>(v + d, headDim, w, count, acc + d); break;
        case 6: accumulateRows<6>(v + d, headDim, w, count, acc + d); break;
        case 5: accumulateRows<5>(v + d, headDim, w, count, acc + d); break;
        case 4: accumulateRows<4>(v + d, headDim, w, count, acc + d); break;
        case 3: accumulateRows<3>(v + d, headDim, w, count, acc + d); break;
        case 2: accumulateRows<2>(v + d, headDim, w, count, acc + d); break;
        default: accumulateRows<1>(v + d, headDim, w, count, acc + d); break;
        }
    }
}

// Each query's V sum acc[r] = sum of its weights times the V rows of its range, in float, in
// position order. V rows are converted to float once per slab of positions for all queries.
void accumulateV(const AttentionHead& h, const AttentionQuery* qs, int n, int lo, int hi, int stride,
                 const float* weights, float* acc) {
    constexpr int kSlabFloats = 8192;
    alignas(32) float slab[kSlabFloats];
    const int slabRows = kSlabFloats / h.headDim;
    for (int p0 = lo; p0 < hi; p0 += slabRows) {
        const int p1 = std::min(hi, p0 + slabRows);
        for (int p = p0; p < p1; ++p) {
            const f16_t* v = vRowAt(h, p);
            for (int i = 0; i < h.headDim; i += 8)
                _mm256_store_ps(slab + (p - p0) * h.headDim + i,
                                _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i))));
        }
        for (int r = 0; r < n; ++r) {
            const int a = std::max(p0, qs[r].first), b = std::min(p1, qs[r].nCtx);
            if (a < b)
                accumulateSpan(slab + (a - p0) * h.headDim, h.headDim, weights + r * stride + (a - lo), b - a,
                               acc + r * kMaxAttentionHeadDim);
        }
    }
}

// acc[r][d0, d0 + 8 * nv) += w_r[p] * v[p] for p in [a, b) and each of nq queries (w_r = w + r *
// stride, indexed from lo), in position order: each V row is converted once, in registers, for
// all of them (queries that share their range: a decode token's GQA group).
template <int nq, int nv>
void accumulateShared(const AttentionHead& h, int d0, int a, int b, const float* w, int stride, int lo, float* acc) {
    __m256 sum[nq][nv];
    for (int r = 0; r < nq; ++r)
        for (int k = 0; k < nv; ++k) sum[r][k] = _mm256_load_ps(acc + r * kMaxAttentionHeadDim + d0 + 8 * k);
    VRowsAhead ahead(h, a, d0 == 0 ? b : a);  // the first run of dimensions streams the rows ahead
    for (int p = a; p < b;) {
        const int blockEnd = std::min(b, (p / h.blockSize + 1) * h.blockSize);
        const f16_t* v = vRowAt(h, p) + d0;
        const int step = vRowStep(h);
        // The block's run on copies of the sums: GCC otherwise stores every sum back to the
        // stack after each position (12 stores a position for four queries), which on a CPU
        // with one 256-bit store a cycle (AMD Zen 3) costs more than the arithmetic.
        __m256 run[nq][nv];
        for (int r = 0; r < nq; ++r)
            for (int k = 0; k < nv; ++k) run[r][k] = sum[r][k];
        for (; p < blockEnd; ++p, v += step) {
            ahead.step();
            if constexpr (nq * nv + nq + 1 <= 16) {  // the weights live, one row vector at a time
                __m256 wp[nq];
                for (int r = 0; r < nq; ++r) wp[r] = _mm256_broadcast_ss(w + r * stride + (p - lo));
                for (int k = 0; k < nv; ++k) {
                    const __m256 row = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + 8 * k)));
                    for (int r = 0; r < nq; ++r) run[r][k] = _mm256_fmadd_ps(wp[r], row, run[r][k]);
                }
            } else {
                __m256 row[nv];
                for (int k = 0; k < nv; ++k)
                    row[k] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + 8 * k)));
                for (int r = 0; r < nq; ++r) {
                    const __m256 wp = _mm256_broadcast_ss(w + r * stride + (p - lo));
                    for (int k = 0; k < nv; ++k) run[r][k] = _mm256_fmadd_ps(wp, row[k], run[r][k]);
                }
            }
        }
        for (int r = 0; r < nq; ++r)
            for (int k = 0; k < nv; ++k) sum[r][k] = run[r][k];
    }
    for (int r = 0; r < nq; ++r)
        for (int k = 0; k < nv; ++k) _mm256_store_ps(acc + r * kMaxAttentionHeadDim + d0 + 8 * k, sum[r][k]);
}

// Dimensions in runs of as many vectors as the registers hold for nq queries: nq * nv sums, the
// nq weights and one row vector (accumulateShared's first form), or for four queries nq * nv
// sums, nv rows and a weight. SmolLM2's three queries over 64 dimensions take two runs of 32
// rather than three of 24, 24 and 16: attention_bench 8064 1 10 30 9 3 64 26.7-27.0 -> 23.5-24.9
// ms a step on AMD Zen 3.
template <int nq>
void accumulateSharedQueries(const AttentionHead& h, int a, int b, const float* w, int stride, int lo, float* acc) {
    constexpr int maxNv = nq == 1 ? 8 : nq == 2 ? 4 : nq == 3 ? 4 : 3;
    int d0 = 0;
    for (; d0 + 8 * maxNv <= h.headDim; d0 += 8 * maxNv) accumulateShared<nq, maxNv>(h, d0, a, b, w, stride, lo, acc);
    // What is left in one run (four queries over 64 dimensions: 24, 24, then 16 in one pass).
    switch ((h.headDim - d0) / 8) {
    case 0: break;
    case 1: accumulateShared<nq, 1>(h, d0, a, b, w, stride, lo, acc); break;
    case 2: accumulateShared<nq, 2>(h, d0, a, b, w, stride, lo, acc); break;  // maxNv > 2 here
    default:
        for (; d0 < h.headDim; d0 += 8) accumulateShared<nq, 1>(h, d0, a, b, w, stride, lo, acc);
    }
}

// The V sums of n queries that share one range [a, b), in groups of at most four.
void accumulateVShared(const AttentionHead& h, int n, int a, int b, const float* weights, int stride, int lo,
                       float* acc) {
    for (int r0 = 0; r0 < n; r0 += 4) {
        const float* w = weights + r0 * stride;
        float* out = acc + r0 * kMaxAttentionHeadDim;
        switch (std::min(4, n - r0)) {
        case 4: accumulateSharedQueries<4>(h, a, b, w, stride, lo, out); break;
        case 3: accumulateSharedQueries<3>(h, a, b, w, stride, lo, out); break;
        case 2: accumulateSharedQueries<2>(h, a, b, w, stride, lo, out); break;
        default: accumulateSharedQueries<1>(h, a, b, w, stride, lo, out); break;
        }
    }
}

// The queries rounded to F16 (as the reference does), one row of kMaxAttentionHeadDim each.
void prepareQueriesF16(const AttentionHead& h, const AttentionQuery* qs, int n, float* q) {
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < h.headDim; i += 8) {
            const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(qs[r].q + i), _MM_FROUND_TO_NEAREST_INT);
            _mm256_store_ps(q + r * kMaxAttentionHeadDim + i, _mm256_cvtph_ps(half));
        }
}

// Each query's partial over piece [a, b) (its own range clipped to it; count 0 when none):
// scores of the union, softmax weights per query, V sums sharing each converted V row.
void pieceF16(const AttentionHead& h, const AttentionQuery* qs, const float* q, int n, int a, int b, float* scores,
              AttentionPartial* parts) {
    alignas(32) float acc[kMaxAttentionQueries * kMaxAttentionHeadDim];
    AttentionQuery clipped[kMaxAttentionQueries];
    int lo = b, hi = a;
    for (int r = 0; r < n; ++r) {
        clipped[r] = qs[r];
        clipped[r].first = std::max(qs[r].first, a), clipped[r].nCtx = std::min(qs[r].nCtx, b);
        if (clipped[r].first >= clipped[r].nCtx) clipped[r].first = clipped[r].nCtx = a;  // none here
        else lo = std::min(lo, clipped[r].first), hi = std::max(hi, clipped[r].nCtx);
        for (int i = 0; i < h.headDim; i += 8) _mm256_store_ps(acc + r * kMaxAttentionHeadDim + i, _mm256_setzero_ps());
    }
    if (lo >= hi) {
        for (int r = 0; r < n; ++r) parts[r].count = 0;
        return;
    }
    // Dimension-major K: whole chunks of eight positions (transposeChunk), or of sixteen for the
    // AVX-512 build (attention_avx512.cpp); lanes before the range are scores no query reads.
    const bool wide = h.kDimMajor && h.avx512 && h.blockSize % 16 == 0;
    if (h.kDimMajor) lo &= wide ? ~15 : ~7;
    const int stride = wide ? (hi - lo + 15) & ~15 : scoreStride(lo, hi);
    if (wide) scoreQueriesAvx512(h, q, n, lo, hi, stride, scores);
    else scoreQueries(h, q, n, lo, hi, stride, scores);
    for (int r = 0; r < n; ++r) {
        const int len = clipped[r].nCtx - clipped[r].first;
        parts[r].count = len;
        if (len == 0) continue;
        float* s = scores + r * stride + (clipped[r].first - lo);
        if (h.softcap > 0.0f)  // Gemma 2: scalar, as the reference
            for (int p = 0; p < len; ++p) s[p] = softcapScore(s[p], h.softcap);
        parts[r].sum = softmaxWeights(s, len, &parts[r].max);
    }
    bool shared = true;  // every query over the same range: V rows converted in registers
    for (int r = 1; r < n; ++r)
        shared = shared && clipped[r].first == clipped[0].first && clipped[r].nCtx == clipped[0].nCtx;
    if (shared && wide) accumulateVSharedAvx512(h, n, clipped[0].first, clipped[0].nCtx, scores, stride, lo, acc);
    else if (shared) accumulateVShared(h, n, clipped[0].first, clipped[0].nCtx, scores, stride, lo, acc);
    else accumulateV(h, clipped, n, lo, hi, stride, scores, acc);
    for (int r = 0; r < n; ++r)
        if (parts[r].count > 0)
            for (int i = 0; i < h.headDim; i += 8)
                _mm256_store_ps(parts[r].acc + i, _mm256_load_ps(acc + r * kMaxAttentionHeadDim + i));
}

// The queries of one call, prepared once: rounded to F16 for an F16 cache, quantized to Q8_0
// for a Q8_0 one; and the union [lo, hi) of their ranges.
struct PreparedQueries {
    alignas(32) float f16[kMaxAttentionQueries * kMaxAttentionHeadDim];
    alignas(32) BlockQ8_0 q8[kMaxAttentionQueries][kMaxAttentionHeadDim / kQK];
    int lo = 0, hi = 0;
};

void prepare(const AttentionHead& h, const AttentionQuery* qs, int n, PreparedQueries& p) {
    p.lo = qs[0].first, p.hi = qs[0].nCtx;
    for (int r = 1; r < n; ++r) p.lo = std::min(p.lo, qs[r].first), p.hi = std::max(p.hi, qs[r].nCtx);
    if (h.type == DType::Q8_0)
        for (int r = 0; r < n; ++r) quantizeRow(DType::Q8_0, qs[r].q, p.q8[r], h.headDim);
    else prepareQueriesF16(h, qs, n, p.f16);
}

// Each query's partial over piece [a, b) (count 0 for a query with no position there).
void onePiece(const AttentionHead& h, const AttentionQuery* qs, int n, const PreparedQueries& p, int a, int b,
              float* scores, AttentionPartial* parts) {
    if (h.type != DType::Q8_0) return pieceF16(h, qs, p.f16, n, a, b, scores, parts);
    for (int r = 0; r < n; ++r) {
        const int a0 = std::max(qs[r].first, a), b0 = std::min(qs[r].nCtx, b);
        if (a0 < b0) pieceQ8(h, p.q8[r], a0, b0, scores, parts[r]);
        else parts[r].count = 0;
    }
}

}  // namespace

void mergePartial(AttentionPartial& run, const AttentionPartial& part, int headDim) {
    if (part.count == 0) return;
    if (run.count == 0) {
        run.count = part.count, run.max = part.max, run.sum = part.sum;
        for (int i = 0; i < headDim; i += 8) _mm256_store_ps(run.acc + i, _mm256_load_ps(part.acc + i));
        return;
    }
    run.count += part.count;
    if (part.max > run.max) {  // the running sums scale down to the new max
        const float c = softmaxExp(run.max - part.max);
        run.sum = std::fma(run.sum, c, part.sum);
        const __m256 vc = _mm256_set1_ps(c);
        for (int i = 0; i < headDim; i += 8)
            _mm256_store_ps(run.acc + i,
                            _mm256_fmadd_ps(_mm256_load_ps(run.acc + i), vc, _mm256_load_ps(part.acc + i)));
        run.max = part.max;
        return;
    }
    const float f = part.max == run.max ? 1.0f : softmaxExp(part.max - run.max);
    run.sum = std::fma(part.sum, f, run.sum);
    const __m256 vf = _mm256_set1_ps(f);
    for (int i = 0; i < headDim; i += 8)
        _mm256_store_ps(run.acc + i, _mm256_fmadd_ps(_mm256_load_ps(part.acc + i), vf, _mm256_load_ps(run.acc + i)));
}

void finishPartial(const AttentionPartial& run, int headDim, float* out) {
    const __m256 inv = _mm256_set1_ps(1.0f / run.sum);
    for (int i = 0; i < headDim; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_load_ps(run.acc + i), inv));
}

void attendQueryPieces(const AttentionHead& given, const AttentionQuery* queries, int nQueries, int pieceLo, int pieceHi,
                       float* scores, AttentionPartial* parts) {
    PreparedQueries p;
    prepare(given, queries, nQueries, p);
    AttentionHead head = given;
    head.prefetchEnd = std::min(p.hi, pieceHi * kAttentionPiece);
    for (int k = pieceLo; k < pieceHi; ++k) {
        const int a = std::max(p.lo, k * kAttentionPiece), b = std::min(p.hi, (k + 1) * kAttentionPiece);
        AttentionPartial* out = parts + static_cast<ptrdiff_t>(k - pieceLo) * nQueries;
        if (a < b) onePiece(head, queries, nQueries, p, a, b, scores, out);
        else
            for (int r = 0; r < nQueries; ++r) out[r].count = 0;
    }
}

void attendQueries(const AttentionHead& given, const AttentionQuery* queries, int nQueries, float* scores,
                   AttentionPartial* partials) {
    PreparedQueries p;
    prepare(given, queries, nQueries, p);
    AttentionHead head = given;
    head.prefetchEnd = p.hi;
    AttentionPartial piece[kMaxAttentionQueries];
    for (int r = 0; r < nQueries; ++r) partials[r].count = 0;
    for (int a = p.lo; a < p.hi;) {
        const int b = std::min(p.hi, attentionPieceEnd(a));
        onePiece(head, queries, nQueries, p, a, b, scores, piece);
        for (int r = 0; r < nQueries; ++r) mergePartial(partials[r], piece[r], head.headDim);
        a = b;
    }
    for (int r = 0; r < nQueries; ++r) finishPartial(partials[r], head.headDim, queries[r].out);
}

}  // namespace hearth::avx2
