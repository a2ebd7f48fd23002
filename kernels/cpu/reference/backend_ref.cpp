// The CPU reference backend: portable scalar operators, written to be read (llama2.c's run.c
// is the model). Every faster backend is tested against this one.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/attention_pieces.h"
#include "kernels/cpu/reference/gelu_tanh.h"
#include "kernels/cpu/reference/matmul.h"
#include "kernels/cpu/reference/quants.h"
#include "kernels/cpu/reference/rope_angles.h"
#include "kernels/cpu/reference/softmax_exp.h"

namespace hearth {
namespace {

class CpuReferenceBackend final : public Backend {
public:
    std::string name() const override { return "CPU (reference)"; }
    bool prefersDimMajorK() const override { return true; }  // the AVX2 backend's order, so caches match
    bool prefersHeadMajorV() const override { return true; }  // the AVX2 backend's order, so caches match

    void matmul(const WeightView& w, const float* x, int64_t nTokens, float* y) override {
        ref::matmul(w.type, w.data, w.nRows, w.nCols, x, nTokens, y);
    }

    void embeddingRows(const WeightView& table, const int32_t* ids, int64_t n, float* out) override {
        const size_t rowSize = rowBytes(table.type, table.nCols);
        const auto* base = static_cast<const uint8_t*>(table.data);
        for (int64_t i = 0; i < n; ++i)
            ref::dequantizeRow(table.type, base + rowSize * static_cast<size_t>(ids[i]), out + i * table.nCols,
                               table.nCols);
    }

    void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y) override {
        for (int64_t r = 0; r < nRows; ++r) {
            const float* xr = x + r * n;
            float* yr = y + r * n;
            double sumSquares = 0.0;  // in double, as ggml's rms_norm does
            for (int64_t i = 0; i < n; ++i) sumSquares += static_cast<double>(xr[i]) * xr[i];
            const float scale = 1.0f / std::sqrt(static_cast<float>(sumSquares / static_cast<double>(n)) + eps);
            for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * scale * w[i];
        }
    }

    void rope(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions, float freqBase,
              RopeStyle style, const float* freqFactors) override {
        const int half = nRot / 2;
        const float thetaScale = ropeThetaScale(freqBase, nRot);
        std::vector<float> cosines(static_cast<size_t>(half)), sines(cosines.size());  // [half] of one token
        for (int64_t t = 0; t < nTokens; ++t) {
            ropeAngles(positions[t], thetaScale, nRot, cosines.data(), sines.data(), freqFactors);
            for (int i = 0; i < half; ++i) {
                const float c = cosines[static_cast<size_t>(i)], s = sines[static_cast<size_t>(i)];
                const int a = style == RopeStyle::Pairwise ? 2 * i : i;
                const int b = style == RopeStyle::Pairwise ? 2 * i + 1 : i + half;
                for (int h = 0; h < nHeads; ++h) {
                    float* head = x + (t * nHeads + h) * headDim;
                    const float x0 = head[a], x1 = head[b];
                    head[a] = x0 * c - x1 * s;
                    head[b] = x0 * s + x1 * c;
                }
            }
        }
    }

    void kvWrite(const PagedKvLayer& layer, const float* k, const float* v, const int32_t* positions,
                 int64_t nTokens) override {
        if (layer.type == DType::Q8_0) return kvWriteQ8(layer, k, v, positions, nTokens);
        for (int64_t t = 0; t < nTokens; ++t) {
            for (int i = 0; i < layer.rowStride; ++i) {
                *kvKElement(layer, positions[t], i) = f32ToF16(k[t * layer.rowStride + i]);
                *kvVElement(layer, positions[t], i) = f32ToF16(v[t * layer.rowStride + i]);
            }
        }
    }

    void attention(const PagedKvLayer& layer, const AttentionShape& shape, const float* q, const int32_t* positions,
                   int64_t nTokens, float* out) override {
        const int qRowSize = shape.nHeads * shape.headDim;
        const int groupSize = shape.nHeads / shape.nKvHeads;  // query heads per KV head (GQA)
        for (int64_t t = 0; t < nTokens; ++t) {
            const int nCtx = positions[t] + 1;
            const int first = shape.slidingWindow > 0 ? std::max(0, nCtx - shape.slidingWindow) : 0;
            for (int h = 0; h < shape.nHeads; ++h) {
                const float* qHead = q + t * qRowSize + h * shape.headDim;
                const int kvOffset = (h / groupSize) * shape.headDim;
                float* outHead = out + t * qRowSize + h * shape.headDim;
                if (layer.type == DType::Q8_0) attendOneHeadQ8(layer, shape, qHead, kvOffset, first, nCtx, outHead);
                else attendOneHead(layer, shape, qHead, kvOffset, first, nCtx, outHead);
            }
        }
    }

    void swiglu(const float* gate, const float* up, int64_t n, float* out) override {
        for (int64_t i = 0; i < n; ++i) out[i] = swigluOne(gate[i], up[i]);
    }

    // GELU in its tanh form through llama.cpp's F16 table (gelu_tanh.h); the AVX2 lanes gather
    // from the same table.
    void geglu(const float* gate, const float* up, int64_t n, float* out) override {
        for (int64_t i = 0; i < n; ++i) out[i] = gegluOne(gate[i], up[i]);
    }

    void add(float* x, const float* y, int64_t n) override {
        for (int64_t i = 0; i < n; ++i) x[i] += y[i];
    }

private:
    // One piece's partial (attention_pieces.h): largest score, sum of weights, V sum [headDim].
    struct Partial {
        float max = -INFINITY, sum = 0.0f;
        std::vector<float> acc;
    };

    // Softmax(q.K^T * scale) . V over positions [first, nCtx) with an F16 cache, reduced in pieces
    // (attention_pieces.h). Within a piece [a, b), in the order the AVX2 path reproduces lane by
    // lane (avx2/attention.cpp): q rounded to F16 (as llama.cpp's CPU flash attention does); each
    // score a chain of fused multiply-adds in dimension order, times the scale (then soft-capped);
    // weights w_p = softmaxExp(score_p - the piece's max); their sum kept in eight partial sums by
    // (p - a) mod 8; the V sum in float, fused multiply-adds in position order.
    void attendOneHead(const PagedKvLayer& layer, const AttentionShape& shape, const float* qHead, int kvOffset,
                       int first, int nCtx, float* outHead) {
        const auto headDim = static_cast<size_t>(shape.headDim);
        qHalf_.resize(headDim);
        for (size_t i = 0; i < headDim; ++i) qHalf_[i] = f16ToF32(f32ToF16(qHead[i]));
        nPartials_ = 0;
        for (int a = first; a < nCtx;) {
            const int b = std::min(nCtx, attentionPieceEnd(a));
            Partial& part = nextPartial(headDim);
            scores_.resize(static_cast<size_t>(b - a));  // scores, then weights
            for (int p = a; p < b; ++p) {
                float dot = 0.0f;
                for (size_t i = 0; i < headDim; ++i)
                    dot = std::fma(qHalf_[i], f16ToF32(*kvKElement(layer, p, kvOffset + static_cast<int>(i))), dot);
                const float score = softcapScore(dot * shape.scale, shape.softcap);
                scores_[static_cast<size_t>(p - a)] = score;
                if (score > part.max) part.max = score;
            }
            float partialSums[8] = {};
            for (int p = a; p < b; ++p) {
                const float weight = softmaxExp(scores_[static_cast<size_t>(p - a)] - part.max);
                partialSums[(p - a) % 8] += weight;
                const f16_t* vRow = kvVElement(layer, p, kvOffset);  // a head's row is contiguous in either order
                for (size_t i = 0; i < headDim; ++i) part.acc[i] = std::fma(weight, f16ToF32(vRow[i]), part.acc[i]);
            }
            const float* s = partialSums;
            part.sum = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
            a = b;
        }
        mergePartials(headDim, outHead);
    }

    // The next piece's partial, zeroed; the buffers are kept between calls (no allocation per piece).
    Partial& nextPartial(size_t headDim) {
        if (nPartials_ == partials_.size()) partials_.emplace_back();
        Partial& part = partials_[nPartials_++];
        part.max = -INFINITY, part.sum = 0.0f;
        part.acc.assign(headDim, 0.0f);
        return part;
    }

    // The partials of one query, merged in piece order (attention_pieces.h): the first as it is,
    // each next one into the running sums, scaled to the larger of the two maxima.
    void mergePartials(size_t headDim, float* outHead) {
        Partial& run = partials_.front();
        for (size_t k = 1; k < nPartials_; ++k) {
            const Partial& part = partials_[k];
            if (part.max > run.max) {
                const float c = softmaxExp(run.max - part.max);
                run.sum = std::fma(run.sum, c, part.sum);
                for (size_t i = 0; i < headDim; ++i) run.acc[i] = std::fma(run.acc[i], c, part.acc[i]);
                run.max = part.max;
            } else {
                const float f = part.max == run.max ? 1.0f : softmaxExp(part.max - run.max);
                run.sum = std::fma(part.sum, f, run.sum);
                for (size_t i = 0; i < headDim; ++i) run.acc[i] = std::fma(part.acc[i], f, run.acc[i]);
            }
        }
        const float inv = 1.0f / run.sum;
        for (size_t i = 0; i < headDim; ++i) outHead[i] = run.acc[i] * inv;
    }

    // Q8_0 rows: each token's K and V row quantized as GGUF's Q8_0 (ref::quantizeRow).
    void kvWriteQ8(const PagedKvLayer& layer, const float* k, const float* v, const int32_t* positions,
                   int64_t nTokens) {
        const size_t rowSize = kvRowBytes(layer);
        for (int64_t t = 0; t < nTokens; ++t) {
            const size_t offset = static_cast<size_t>(positions[t] % layer.blockSize) * rowSize;
            const int block = positions[t] / layer.blockSize;
            ref::quantizeRow(DType::Q8_0, k + t * layer.rowStride,
                             reinterpret_cast<uint8_t*>(layer.kBlocks[block]) + offset, layer.rowStride);
            ref::quantizeRow(DType::Q8_0, v + t * layer.rowStride,
                             reinterpret_cast<uint8_t*>(layer.vBlocks[block]) + offset, layer.rowStride);
        }
    }

    // As attendOneHead over a Q8_0 cache, the way llama.cpp's CPU flash attention does with a
    // Q8_0 cache: q quantized to Q8_0, q.k = ref::vecDot (integer sums per block, scaled and
    // summed in float in block order); within each piece an online softmax (libm exp) with the
    // running V sum in float over dequantized rows; the pieces merged as attention_pieces.h says.
    void attendOneHeadQ8(const PagedKvLayer& layer, const AttentionShape& shape, const float* qHead, int kvOffset,
                         int first, int nCtx, float* outHead) {
        const auto headDim = static_cast<size_t>(shape.headDim);
        qQ8_.resize(rowBytes(DType::Q8_0, shape.headDim));
        ref::quantizeRow(DType::Q8_0, qHead, qQ8_.data(), shape.headDim);
        vRow_.resize(headDim);
        const size_t rowSize = kvRowBytes(layer), headOffset = rowBytes(DType::Q8_0, kvOffset);
        nPartials_ = 0;
        for (int a = first; a < nCtx;) {
            const int b = std::min(nCtx, attentionPieceEnd(a));
            Partial& part = nextPartial(headDim);
            for (int p = a; p < b; ++p) {
                const size_t offset = static_cast<size_t>(p % layer.blockSize) * rowSize + headOffset;
                const auto* kRow = reinterpret_cast<const uint8_t*>(layer.kBlocks[p / layer.blockSize]) + offset;
                const auto* vRow = reinterpret_cast<const uint8_t*>(layer.vBlocks[p / layer.blockSize]) + offset;
                const float score = softcapScore(
                    ref::vecDot(DType::Q8_0, kRow, qQ8_.data(), shape.headDim) * shape.scale, shape.softcap);
                float accumScale = 1.0f, weight = 1.0f;
                if (score > part.max) {
                    accumScale = std::exp(part.max - score);
                    part.max = score;
                    for (float& x : part.acc) x = x * accumScale;
                } else {
                    weight = std::exp(score - part.max);
                }
                ref::dequantizeRow(DType::Q8_0, vRow, vRow_.data(), shape.headDim);
                for (size_t i = 0; i < headDim; ++i) part.acc[i] = part.acc[i] + vRow_[i] * weight;
                part.sum = part.sum * accumScale + weight;
            }
            a = b;
        }
        mergePartials(headDim, outHead);
    }

    std::vector<float> qHalf_, scores_;
    std::vector<Partial> partials_;  // one query's pieces, in order: the first nPartials_ are in use
    size_t nPartials_ = 0;
    std::vector<uint8_t> qQ8_;
    std::vector<float> accumF32_, vRow_;
};

}  // namespace

std::unique_ptr<Backend> makeCpuReferenceBackend() { return std::make_unique<CpuReferenceBackend>(); }

}  // namespace hearth
