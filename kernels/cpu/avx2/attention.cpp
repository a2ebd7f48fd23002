// AVX2 attention over the paged F16 KV cache, bit for bit the reference's (backend_ref.cpp,
// attendOneHead): q rounded to F16; each q·k summed in float in dimension order, eight cache
// positions side by side in the lanes; then the online softmax in position order with its
// running V sum kept in F16, eight dimensions per vector. Every lane performs the reference's
// float operations in the reference's order (-ffp-contract=off), and exp is the same libm
// expf the reference calls. Several queries over the same KV head (a GQA group, consecutive
// tokens) share one pass over K and V: each K chunk is transposed and converted once and each
// V row converted once for all of them, while every query keeps its own order (attendQueries).
// A Q8_0 cache (attendOneHeadQ8) follows attendOneHeadQ8 of the reference: q quantized and q·k
// by this backend's bitwise-equal quantizeRow/vecDot, the running V sum in float over rows
// dequantized as d * q.
#include <math.h>

#include <algorithm>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/simd.h"

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
// lanes at or past `end` read a row of zeros (the last, partial chunk).
void transposeChunk(const AttentionHead& h, int p, int end, __m256* kT) {
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

// For each of nq (at most 4) queries: out[r][j] = (Σ_i q_r[i]·k_{p+j}[i]) · scale, summed in
// dimension order; the queries' chains are independent, interleaved only to hide latency.
template <int nq>
void scoreChunk(const __m256* kT, int headDim, const float* const* q, float scale, float* const* out) {
    __m256 dot[nq];
    for (int r = 0; r < nq; ++r) dot[r] = _mm256_setzero_ps();
    for (int i = 0; i < headDim; ++i)
        for (int r = 0; r < nq; ++r) dot[r] = _mm256_add_ps(dot[r], _mm256_mul_ps(_mm256_broadcast_ss(q[r] + i), kT[i]));
    for (int r = 0; r < nq; ++r) _mm256_storeu_ps(out[r], _mm256_mul_ps(dot[r], _mm256_set1_ps(scale)));
}

// accum = f16(f32(accum) * s) over the head (s a broadcast float).
inline void scaleAccum(f16_t* accum, int headDim, __m256 s) {
    for (int i = 0; i < headDim; i += 8) {
        __m128i* a = reinterpret_cast<__m128i*>(accum + i);
        _mm_storeu_si128(a, _mm256_cvtps_ph(_mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(a)), s), _MM_FROUND_TO_NEAREST_INT));
    }
}

inline const uint8_t* kvRowQ8(const f16_t* const* blocks, const AttentionHead& h, int p) {
    const size_t rowSize = static_cast<size_t>(h.rowStride / kQK) * sizeof(BlockQ8_0);
    const size_t headOffset = static_cast<size_t>(h.kvOffset / kQK) * sizeof(BlockQ8_0);
    return reinterpret_cast<const uint8_t*>(blocks[p / h.blockSize]) + static_cast<size_t>(p % h.blockSize) * rowSize + headOffset;
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

void attendOneHeadQ8(const AttentionHead& h, const float* qHead, float* scores, float* outHead) {
    alignas(32) BlockQ8_0 q[kMaxAttentionHeadDim / kQK];
    alignas(32) float accum[kMaxAttentionHeadDim];
    quantizeRow(DType::Q8_0, qHead, q, h.headDim);
    for (int i = 0; i < h.headDim; i += 8) _mm256_store_ps(accum + i, _mm256_setzero_ps());
    for (int p = h.first; p < h.nCtx; ++p)
        scores[p - h.first] = vecDot(DType::Q8_0, kvRowQ8(h.kBlocks, h, p), q, h.headDim) * h.scale;
    float runningMax = -INFINITY, runningSum = 0.0f;
    for (int p = h.first; p < h.nCtx; ++p) {
        const float score = scores[p - h.first];
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
    const __m256 inv = _mm256_set1_ps(1.0f / runningSum);
    for (int i = 0; i < h.headDim; i += 8) _mm256_storeu_ps(outHead + i, _mm256_mul_ps(_mm256_load_ps(accum + i), inv));
}

// A query's row of scores: the span rounded up to whole 8-position chunks.
inline int scoreStride(int lo, int hi) { return (hi - lo + 7) & ~7; }

// Scores of every query over the union [lo, hi) of their ranges: scores[r * stride + p - lo]
// (the last chunk's unused lanes too, scores of rows of zeros). Positions outside a query's
// own range are computed too (the union is contiguous, so they are cache positions of another
// query) and never read.
void scoreQueries(const AttentionHead& h, const float* q, int n, int lo, int hi, float* scores) {
    alignas(32) __m256 kT[kMaxAttentionHeadDim];
    const int stride = scoreStride(lo, hi);
    for (int p = lo; p < hi; p += 8) {
        transposeChunk(h, p, hi, kT);
        for (int r0 = 0; r0 < n; r0 += 4) {
            const float* qs[4];
            float* outs[4];
            const int m = std::min(4, n - r0);
            for (int k = 0; k < m; ++k) {
                qs[k] = q + (r0 + k) * kMaxAttentionHeadDim;
                outs[k] = scores + (r0 + k) * stride + (p - lo);
            }
            if (m == 4) scoreChunk<4>(kT, h.headDim, qs, h.scale, outs);
            else if (m == 3) scoreChunk<3>(kT, h.headDim, qs, h.scale, outs);
            else if (m == 2) scoreChunk<2>(kT, h.headDim, qs, h.scale, outs);
            else scoreChunk<1>(kT, h.headDim, qs, h.scale, outs);
        }
    }
}

// The online softmax of every query over its own range, in position order, and its F16 running
// V sum (accum: n rows of kMaxAttentionHeadDim); each V row is loaded and converted once.
void accumulateV(const AttentionHead& h, const AttentionQuery* qs, int n, int lo, int hi, const float* scores,
                 f16_t* accum, float* runningSum) {
    float runningMax[kMaxAttentionQueries];
    for (int r = 0; r < n; ++r) runningMax[r] = -INFINITY, runningSum[r] = 0.0f;
    for (int p = lo; p < hi; ++p) {
        f16_t* active[kMaxAttentionQueries];  // the accum rows of the queries that see p
        __m256 weights[kMaxAttentionQueries];
        int nActive = 0;
        for (int r = 0; r < n; ++r) {
            if (p < qs[r].first || p >= qs[r].nCtx) continue;
            const float score = scores[r * scoreStride(lo, hi) + (p - lo)];
            float accumScale = 1.0f, weight = 1.0f;
            if (score > runningMax[r]) {
                accumScale = expf(runningMax[r] - score);
                runningMax[r] = score;
                scaleAccum(accum + r * kMaxAttentionHeadDim, h.headDim, _mm256_set1_ps(accumScale));
            } else {
                weight = expf(score - runningMax[r]);
            }
            runningSum[r] = runningSum[r] * accumScale + weight;
            active[nActive] = accum + r * kMaxAttentionHeadDim;
            weights[nActive++] = _mm256_set1_ps(weight);
        }
        const f16_t* v = kvRow(h.vBlocks, h, p);
        for (int i = 0; i < h.headDim; i += 8) {
            const __m256 vv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i)));
            for (int a = 0; a < nActive; ++a) {  // accum = f16(f32(accum) + f32(v) * w)
                auto* acc = reinterpret_cast<__m128i*>(active[a] + i);
                const __m256 sum = _mm256_add_ps(_mm256_cvtph_ps(_mm_load_si128(acc)), _mm256_mul_ps(vv, weights[a]));
                _mm_store_si128(acc, _mm256_cvtps_ph(sum, _MM_FROUND_TO_NEAREST_INT));
            }
        }
    }
}

void attendQueriesF16(const AttentionHead& h, const AttentionQuery* qs, int n, float* scores) {
    alignas(32) float q[kMaxAttentionQueries * kMaxAttentionHeadDim];
    alignas(32) f16_t accum[kMaxAttentionQueries * kMaxAttentionHeadDim];
    int lo = qs[0].first, hi = qs[0].nCtx;
    for (int r = 0; r < n; ++r) {
        lo = std::min(lo, qs[r].first), hi = std::max(hi, qs[r].nCtx);
        for (int i = 0; i < h.headDim; i += 8) {
            const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(qs[r].q + i), _MM_FROUND_TO_NEAREST_INT);
            _mm256_store_ps(q + r * kMaxAttentionHeadDim + i, _mm256_cvtph_ps(half));
            _mm_store_si128(reinterpret_cast<__m128i*>(accum + r * kMaxAttentionHeadDim + i), _mm_setzero_si128());
        }
    }
    scoreQueries(h, q, n, lo, hi, scores);
    float runningSum[kMaxAttentionQueries];
    accumulateV(h, qs, n, lo, hi, scores, accum, runningSum);
    for (int r = 0; r < n; ++r) {
        const __m256 inv = _mm256_set1_ps(1.0f / runningSum[r]);
        const f16_t* a = accum + r * kMaxAttentionHeadDim;
        for (int i = 0; i < h.headDim; i += 8)
            _mm256_storeu_ps(qs[r].out + i, _mm256_mul_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(a + i))), inv));
    }
}

}  // namespace

void attendQueries(const AttentionHead& head, const AttentionQuery* queries, int nQueries, float* scores) {
    if (head.type != DType::Q8_0) return attendQueriesF16(head, queries, nQueries, scores);
    for (int r = 0; r < nQueries; ++r) {
        AttentionHead one = head;
        one.first = queries[r].first, one.nCtx = queries[r].nCtx;
        attendOneHeadQ8(one, queries[r].q, scores, queries[r].out);
    }
}

}  // namespace hearth::avx2
