// The AVX2 backend and the type dispatch of the AVX2 kernels. This file is built for baseline
// x86-64 (it holds std containers, whose inline code must not be AVX2-compiled, see
// kernels/CMakeLists.txt); it calls the AVX2 kernels only through kernels.h.
#include "kernels/cpu/avx2/backend_avx2.h"

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/reference/quants.h"
#include "kernels/cpu/thread_pool.h"

namespace hearth {
namespace avx2 {

float vecDot(DType w, const void* weightRow, const void* actRow, int64_t n) {
    switch (w) {
    case DType::F32: case DType::F16: case DType::BF16: return vecDotFloat(w, weightRow, actRow, n);
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: return vecDotK(w, weightRow, actRow, n);
    default: return vecDotQ32(w, weightRow, actRow, n);
    }
}

void matmulRows(const MatmulArgs& args, int64_t rowBegin, int64_t rowEnd) {
    switch (args.wType) {
    case DType::F32: case DType::F16: case DType::BF16: return matmulRowsFloat(args, rowBegin, rowEnd);
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: return matmulRowsK(args, rowBegin, rowEnd);
    default: return matmulRowsQ32(args, rowBegin, rowEnd);
    }
}

size_t gemmPanelBytes(DType w, int64_t nCols) {
    switch (w) {
    case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::Q8_0: return gemmPanelBytesQ32(nCols);
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: return gemmPanelBytesK(nCols);
    case DType::F32: case DType::F16: case DType::BF16: return gemmPanelBytesFloat(nCols);
    default: return 0;
    }
}

size_t gemmActInfoBytes(DType w, int64_t nCols) {
    switch (w) {
    case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::Q8_0: return gemmActInfoBytesQ32(nCols);
    case DType::F32: case DType::F16: case DType::BF16: return gemmActInfoBytesFloat(nCols);
    default: return 0;
    }
}

void gemmActInfo(const MatmulArgs& args, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    switch (args.wType) {
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: return;
    case DType::F32: case DType::F16: case DType::BF16: return gemmActInfoFloat(args, tokenBegin, tokenEnd, info);
    default: return gemmActInfoQ32(args, tokenBegin, tokenEnd, info);
    }
}

void gemmPanel(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch) {
    switch (args.wType) {
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: return gemmPanelK(args, row0, scratch);
    case DType::F32: case DType::F16: case DType::BF16: return gemmPanelFloat(args, actInfo, row0, scratch);
    default: return gemmPanelQ32(args, actInfo, row0, scratch);
    }
}

}  // namespace avx2

namespace {

// From this many tokens on, a matmul goes through the panels (gemmPanel): unpacking a panel
// costs about as much as one token's products, so a few tokens already pay for it.
constexpr int64_t kPanelMinTokens = 4;

// Per-thread panel scratch: 64-byte aligned chunks (the panels' vector stores need 32).
struct alignas(64) ScratchLine { unsigned char bytes[64]; };

// Rows are handed to threads in groups of 8, the decode tile height (dot_q32.cpp), so that
// no thread is left with a ragged tile in the middle of the matrix.
constexpr int64_t kRowGroup = 8;

class CpuAvx2Backend final : public Backend {
public:
    explicit CpuAvx2Backend(int nThreads) : pool_(nThreads), reference_(makeCpuReferenceBackend()) {}

    // Without the thread count: the engine keys KV blocks by backend name, and results do not
    // depend on the thread count.
    std::string name() const override { return "CPU (AVX2)"; }

    // Activations are quantized once per token (in parallel over tokens for a prefill), then
    // each thread computes whole rows for every token: a value never depends on the thread
    // count or on the batch (DESIGN.md, batch invariance).
    void matmul(const WeightView& w, const float* x, int64_t nTokens, float* y) override {
        const DType actType = ref::vecDotType(w.type);
        avx2::MatmulArgs args;
        args.wType = w.type;
        args.weights = w.data;
        args.weightRowBytes = rowBytes(w.type, w.nCols);
        args.nCols = w.nCols;
        args.actRowBytes = rowBytes(actType, w.nCols);
        args.nTokens = nTokens;
        args.y = y;
        args.yStride = w.nRows;
        args.acts = actType == DType::F32  // F32 weights take the activations as they are
                        ? static_cast<const void*>(x)
                        : quantizeActivations(actType, x, nTokens, args.actRowBytes, w.nCols);
        if (nTokens >= kPanelMinTokens && w.nRows >= avx2::kPanelRows && avx2::gemmPanelBytes(w.type, w.nCols) > 0)
            return matmulPanels(args, w.nRows);
        const int64_t nGroups = (w.nRows + kRowGroup - 1) / kRowGroup;
        pool_.parallelFor(nGroups, [&](int64_t begin, int64_t end) {
            avx2::matmulRows(args, begin * kRowGroup, std::min(end * kRowGroup, w.nRows));
        });
    }

    void embeddingRows(const WeightView& table, const int32_t* ids, int64_t n, float* out) override {
        reference_->embeddingRows(table, ids, n, out);
    }
    void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y) override {
        reference_->rmsNorm(x, w, nRows, n, eps, y);
    }
    void rope(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions,
              float freqBase, RopeStyle style) override {
        reference_->rope(x, nTokens, nHeads, headDim, nRot, positions, freqBase, style);
    }
    void kvWrite(const PagedKvLayer& layer, const float* k, const float* v, const int32_t* positions,
                 int64_t nTokens) override {
        reference_->kvWrite(layer, k, v, positions, nTokens);
    }
    // Heads (of every token) are independent: split over the threads, each with its own
    // scores scratch. Each head is reduced exactly as the reference does (attention.cpp).
    void attention(const PagedKvLayer& layer, const AttentionShape& shape, const float* q,
                   const int32_t* positions, int64_t nTokens, float* out) override {
        if (shape.headDim % 8 != 0 || shape.headDim > avx2::kMaxAttentionHeadDim)
            return reference_->attention(layer, shape, q, positions, nTokens, out);
        int maxCtx = 0;
        for (int64_t t = 0; t < nTokens; ++t) maxCtx = std::max(maxCtx, positions[t] + 1);
        scores_.resize(static_cast<size_t>(pool_.size()));
        for (std::vector<float>& s : scores_)
            if (s.size() < static_cast<size_t>(maxCtx)) s.resize(static_cast<size_t>(maxCtx));
        pool_.parallelFor(nTokens * shape.nHeads, [&](int64_t begin, int64_t end, int thread) {
            for (int64_t task = begin; task < end; ++task)
                attendTask(layer, shape, q, positions[task / shape.nHeads], task, scores_[static_cast<size_t>(thread)].data(), out);
        });
    }

    void swiglu(const float* gate, const float* up, int64_t n, float* out) override {
        reference_->swiglu(gate, up, n, out);
    }
    void geglu(const float* gate, const float* up, int64_t n, float* out) override {
        reference_->geglu(gate, up, n, out);
    }
    void add(float* x, const float* y, int64_t n) override { reference_->add(x, y, n); }

private:
    void attendTask(const PagedKvLayer& layer, const AttentionShape& shape, const float* q, int32_t position,
                    int64_t task, float* scores, float* out) const {
        const int64_t t = task / shape.nHeads;
        const int h = static_cast<int>(task % shape.nHeads);
        avx2::AttentionHead head;
        head.kBlocks = layer.kBlocks;
        head.vBlocks = layer.vBlocks;
        head.blockSize = layer.blockSize;
        head.rowStride = layer.rowStride;
        head.headDim = shape.headDim;
        head.scale = shape.scale;
        head.kvOffset = (h / (shape.nHeads / shape.nKvHeads)) * shape.headDim;
        head.nCtx = position + 1;
        head.first = shape.slidingWindow > 0 ? std::max(0, head.nCtx - shape.slidingWindow) : 0;
        head.type = layer.type;
        const int64_t offset = (t * shape.nHeads + h) * shape.headDim;
        avx2::attendOneHead(head, q + offset, scores, out + offset);
    }

    // Whole panels split over the threads (each unpacks its panel once and runs every token
    // through it); the last nRows % kPanelRows rows take the matrix-vector tiles.
    void matmulPanels(const avx2::MatmulArgs& args, int64_t nRows) {
        const void* info = nullptr;
        if (const size_t perToken = avx2::gemmActInfoBytes(args.wType, args.nCols); perToken > 0) {
            actInfo_.resize((perToken * static_cast<size_t>(args.nTokens) + sizeof(ScratchLine) - 1) / sizeof(ScratchLine));
            pool_.parallelFor(args.nTokens,
                              [&](int64_t begin, int64_t end) { avx2::gemmActInfo(args, begin, end, actInfo_.data()); });
            info = actInfo_.data();
        }
        const size_t nLines = (avx2::gemmPanelBytes(args.wType, args.nCols) + sizeof(ScratchLine) - 1) / sizeof(ScratchLine);
        panels_.resize(static_cast<size_t>(pool_.size()));
        for (std::vector<ScratchLine>& p : panels_)
            if (p.size() < nLines) p.resize(nLines);
        const int64_t nPanels = nRows / avx2::kPanelRows;
        pool_.parallelFor(nPanels, [&](int64_t begin, int64_t end, int thread) {
            for (int64_t p = begin; p < end; ++p)
                avx2::gemmPanel(args, info, p * avx2::kPanelRows, panels_[static_cast<size_t>(thread)].data());
        });
        if (nPanels * avx2::kPanelRows < nRows) avx2::matmulRows(args, nPanels * avx2::kPanelRows, nRows);
    }

    // Returns [nTokens] rows of actType in scratch_, which only grows (no allocation once the
    // largest batch has been seen).
    const void* quantizeActivations(DType actType, const float* x, int64_t nTokens, size_t actRowBytes, int64_t nCols) {
        const size_t need = actRowBytes * static_cast<size_t>(nTokens);
        if (scratch_.size() < need) scratch_.resize(need);
        unsigned char* out = scratch_.data();
        const auto quantizeTokens = [&](int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t)
                avx2::quantizeRow(actType, x + t * nCols, out + static_cast<size_t>(t) * actRowBytes, nCols);
        };
        if (nTokens == 1) quantizeTokens(0, 1);
        else pool_.parallelFor(nTokens, quantizeTokens);
        return out;
    }

    ThreadPool pool_;
    std::unique_ptr<Backend> reference_;
    std::vector<unsigned char> scratch_;
    std::vector<std::vector<float>> scores_;  // per thread: one head's attention scores
    std::vector<std::vector<ScratchLine>> panels_;  // per thread: one unpacked weight panel
    std::vector<ScratchLine> actInfo_;              // [nTokens] rows of gemmActInfo
};

}  // namespace

std::unique_ptr<Backend> makeCpuAvx2Backend(int nThreads) { return std::make_unique<CpuAvx2Backend>(nThreads); }

}  // namespace hearth
