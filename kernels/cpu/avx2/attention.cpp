// AVX2 attention of one query head over the paged F16 KV cache, bit for bit the reference's
// (backend_ref.cpp, attendOneHead): q rounded to F16; each q·k summed in float in dimension
// order, eight cache positions side by side in the lanes; then the online softmax in position
// order with its running V sum kept in F16, eight dimensions per vector. Every lane performs
// the reference's float operations in the reference's order (-ffp-contract=off), and exp is
// the same libm expf the reference calls. A Q8_0 cache (attendOneHeadQ8) follows
// attendOneHeadQ8 of the reference: q quantized and q·k by this backend's bitwise-equal
// quantizeRow/vecDot, the running V sum in float over rows dequantized as d * q.
#include <math.h>

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

// scores[j] = (Σ_i q[i]·k_{p+j}[i]) · scale for the eight positions p..p+7.
void scoreEight(const AttentionHead& h, const float* q, int p, float* scores) {
    const f16_t* rows[8];
    for (int j = 0; j < 8; ++j) rows[j] = kvRow(h.kBlocks, h, p + j);
    __m256 dot = _mm256_setzero_ps();
    for (int i0 = 0; i0 < h.headDim; i0 += 8) {
        __m128i in[8], dims[8];
        for (int j = 0; j < 8; ++j) in[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[j] + i0));
        transpose8x8(in, dims);
        for (int i = 0; i < 8; ++i)
            dot = _mm256_add_ps(dot, _mm256_mul_ps(_mm256_set1_ps(q[i0 + i]), _mm256_cvtph_ps(dims[i])));
    }
    _mm256_storeu_ps(scores, _mm256_mul_ps(dot, _mm256_set1_ps(h.scale)));
}

float scoreOne(const AttentionHead& h, const float* q, int p) {
    const f16_t* k = kvRow(h.kBlocks, h, p);
    float dot = 0.0f;
    for (int i = 0; i < h.headDim; ++i) dot = dot + q[i] * halfToFloat(k[i]);
    return dot * h.scale;
}

// accum = f16(f32(accum) * s) over the head (s a broadcast float).
inline void scaleAccum(f16_t* accum, int headDim, __m256 s) {
    for (int i = 0; i < headDim; i += 8) {
        __m128i* a = reinterpret_cast<__m128i*>(accum + i);
        _mm_storeu_si128(a, _mm256_cvtps_ph(_mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(a)), s), _MM_FROUND_TO_NEAREST_INT));
    }
}

// accum = f16(f32(accum) + f32(v) * w).
inline void addWeightedV(f16_t* accum, const f16_t* v, int headDim, __m256 w) {
    for (int i = 0; i < headDim; i += 8) {
        __m128i* a = reinterpret_cast<__m128i*>(accum + i);
        const __m256 vv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i)));
        const __m256 sum = _mm256_add_ps(_mm256_cvtph_ps(_mm_loadu_si128(a)), _mm256_mul_ps(vv, w));
        _mm_storeu_si128(a, _mm256_cvtps_ph(sum, _MM_FROUND_TO_NEAREST_INT));
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

}  // namespace

void attendOneHead(const AttentionHead& h, const float* qHead, float* scores, float* outHead) {
    if (h.type == DType::Q8_0) return attendOneHeadQ8(h, qHead, scores, outHead);
    alignas(32) float q[kMaxAttentionHeadDim];
    alignas(32) f16_t accum[kMaxAttentionHeadDim];
    for (int i = 0; i < h.headDim; i += 8) {
        const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(qHead + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_store_ps(q + i, _mm256_cvtph_ps(half));
        _mm_store_si128(reinterpret_cast<__m128i*>(accum + i), _mm_setzero_si128());
    }
    const int nPositions = h.nCtx - h.first;
    int j = 0;
    for (; j + 8 <= nPositions; j += 8) scoreEight(h, q, h.first + j, scores + j);
    for (; j < nPositions; ++j) scores[j] = scoreOne(h, q, h.first + j);

    float runningMax = -INFINITY, runningSum = 0.0f;
    for (int p = h.first; p < h.nCtx; ++p) {
        const float score = scores[p - h.first];
        float accumScale = 1.0f, weight = 1.0f;
        if (score > runningMax) {
            accumScale = expf(runningMax - score);
            runningMax = score;
            scaleAccum(accum, h.headDim, _mm256_set1_ps(accumScale));
        } else {
            weight = expf(score - runningMax);
        }
        addWeightedV(accum, kvRow(h.vBlocks, h, p), h.headDim, _mm256_set1_ps(weight));
        runningSum = runningSum * accumScale + weight;
    }
    const __m256 inv = _mm256_set1_ps(1.0f / runningSum);
    for (int i = 0; i < h.headDim; i += 8)
        _mm256_storeu_ps(outHead + i, _mm256_mul_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(accum + i))), inv));
}

}  // namespace hearth::avx2
