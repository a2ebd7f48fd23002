// The CUDA backend: the Backend interface over host pointers, so each call copies its
// activations to the device, runs the kernels of ops.h on one stream, and copies the result
// back. Weights are uploaded once (WeightCache); KV blocks are mirrored (KvMirror).
#include "kernels/cuda/plugin/cuda_backend.h"

#include <cublas_v2.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/backend.h"
#include "kernels/cuda/plugin/device_memory.h"
#include "kernels/cuda/plugin/ops.h"

namespace hearth::cuda {
namespace {

// Batches of more tokens than this go through cuBLAS (F16 tiles); fewer use the dp4a
// mat-vec, whose result for a token does not depend on its batch (decode and verification).
constexpr int64_t kGemmMinTokens = 16;
// Rows of a weight matrix dequantized to F16 per cuBLAS call (bounds the tile buffer).
constexpr size_t kTileBytes = size_t{64} << 20;

void checkBlas(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string("cuBLAS: ") + what + " failed (status " + std::to_string(status) + ")");
}

class CudaBackend final : public Backend {
public:
    CudaBackend() {
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        checkBlas(cublasCreate(&blas_), "cublasCreate");
        checkBlas(cublasSetStream(blas_, stream_), "cublasSetStream");
    }
    ~CudaBackend() override {
        cublasDestroy(blas_);
        cudaStreamDestroy(stream_);
    }

    std::string name() const override { return "CUDA"; }

    void matmul(const WeightView& w, const float* x, int64_t nTokens, float* y) override {
        const size_t weightBytes = rowBytes(w.type, w.nCols) * static_cast<size_t>(w.nRows);
        const uint8_t* dw = weights_.get(w.data, weightBytes, stream_);
        float* dx = upload(x_, x, nTokens * w.nCols);
        float* dy = out_.reserveFloats(nTokens * w.nRows);
        if (nTokens >= kGemmMinTokens) gemm(w, dw, dx, nTokens, dy);
        else matvecTokens(w, dw, dx, nTokens, dy);
        download(y, dy, nTokens * w.nRows);
    }

    void embeddingRows(const WeightView& table, const int32_t* ids, int64_t n, float* out) override {
        const size_t bytes = rowBytes(table.type, table.nCols) * static_cast<size_t>(table.nRows);
        const uint8_t* dt = weights_.get(table.data, bytes, stream_);
        const int32_t* dids = uploadInts(ints_, ids, n);
        float* dout = out_.reserveFloats(n * table.nCols);
        cuda::embeddingRows(table.type, dt, table.nCols, dids, n, dout, stream_);
        download(out, dout, n * table.nCols);
    }

    void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y) override {
        float* dx = upload(x_, x, nRows * n);
        float* dw = upload(y_, w, n);  // norm weights are small: copied per call
        cuda::rmsNorm(dx, dw, nRows, n, eps, dx, stream_);
        download(y, dx, nRows * n);
    }

    void rope(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions, float freqBase,
              RopeStyle style, const float* freqFactors) override {
        float* dx = upload(x_, x, nTokens * nHeads * headDim);
        const int32_t* dp = uploadInts(ints_, positions, nTokens);
        const float* df = freqFactors != nullptr ? upload(y_, freqFactors, nRot / 2) : nullptr;  // nRot / 2 floats
        cuda::rope(dx, nTokens, nHeads, headDim, nRot, dp, freqBase, df, style == RopeStyle::Pairwise, stream_);
        download(x, dx, nTokens * nHeads * headDim);
    }

    void kvWrite(const PagedKvLayer& layer, const float* k, const float* v, const int32_t* positions,
                 int64_t nTokens) override;
    void attention(const PagedKvLayer& layer, const AttentionShape& shape, const float* q, const int32_t* positions,
                   int64_t nTokens, float* out) override;

    void swiglu(const float* gate, const float* up, int64_t n, float* out) override {
        float* dg = upload(x_, gate, n);
        float* du = upload(y_, up, n);
        cuda::swiglu(dg, du, n, dg, stream_);
        download(out, dg, n);
    }

    void geglu(const float* gate, const float* up, int64_t n, float* out) override {
        float* dg = upload(x_, gate, n);
        float* du = upload(y_, up, n);
        cuda::geglu(dg, du, n, dg, stream_);
        download(out, dg, n);
    }

    void add(float* x, const float* y, int64_t n) override {
        float* dx = upload(x_, x, n);
        float* dy = upload(y_, y, n);
        cuda::add(dx, dy, n, stream_);
        download(x, dx, n);
    }

private:
    struct Scratch : DeviceBuffer {
        float* reserveFloats(int64_t n) {
            reserve(static_cast<size_t>(n) * sizeof(float));
            return as<float>();
        }
    };

    float* upload(Scratch& buffer, const float* host, int64_t n) {
        float* d = buffer.reserveFloats(n);
        check(cudaMemcpyAsync(d, host, static_cast<size_t>(n) * sizeof(float), cudaMemcpyHostToDevice, stream_),
              "upload");
        return d;
    }
    int32_t* uploadInts(Scratch& buffer, const int32_t* host, int64_t n) {
        buffer.reserve(static_cast<size_t>(n) * sizeof(int32_t));
        check(cudaMemcpyAsync(buffer.get(), host, static_cast<size_t>(n) * sizeof(int32_t), cudaMemcpyHostToDevice,
                              stream_),
              "upload");
        return buffer.as<int32_t>();
    }
    // Copies back and waits: the caller reads the host buffer next.
    void download(float* host, const float* device, int64_t n) {
        check(cudaGetLastError(), "launching a kernel");
        check(cudaMemcpyAsync(host, device, static_cast<size_t>(n) * sizeof(float), cudaMemcpyDeviceToHost, stream_),
              "download");
        check(cudaStreamSynchronize(stream_), "a kernel");
    }

    // x quantized as the reference quantizes it for w's type (scratch reused by the next call).
    ActBuffers quantized(const WeightView& w, const float* dx, int64_t nTokens) {
        const ActSizes sizes = actSizes(nTokens, w.nCols);
        actQ_.reserve(sizes.q);
        actD_.reserve(sizes.d);
        actS_.reserve(sizes.s);
        actBsums_.reserve(sizes.bsums);
        actF_.reserve(sizes.f);
        const ActBuffers a{actQ_.as<int8_t>(), actD_.as<float>(), actS_.as<float>(), actBsums_.as<int16_t>(),
                           actF_.as<float>()};
        quantizeActivations(w.type, dx, nTokens, w.nCols, a, stream_);
        return a;
    }

    void matvecTokens(const WeightView& w, const uint8_t* dw, const float* dx, int64_t nTokens, float* dy) {
        matvec(w.type, dw, w.nRows, w.nCols, quantized(w, dx, nTokens), nTokens, dy, stream_);
    }

    // y = x · Wᵀ with W dequantized to F16 tiles of rows and x quantized as the reference does
    // (8-bit blocks, then q·d as halves); F32 accumulation (cuBLAS picks the reduction order
    // by shape, so prefill is close to, not bitwise, decode).
    void gemm(const WeightView& w, const uint8_t* dw, const float* dx, int64_t nTokens, float* dy) {
        xHalf_.reserve(static_cast<size_t>(nTokens * w.nCols) * sizeof(__half));
        activationsToHalf(w.type, quantized(w, dx, nTokens), nTokens * w.nCols, xHalf_.as<__half>(), stream_);
        const int64_t tileRows =
            std::max<int64_t>(1, static_cast<int64_t>(kTileBytes / (static_cast<size_t>(w.nCols) * 2)));
        const size_t wRowBytes = rowBytes(w.type, w.nCols);
        tile_.reserve(static_cast<size_t>(std::min(tileRows, w.nRows) * w.nCols) * sizeof(__half));
        const float alpha = 1.0f, beta = 0.0f;
        for (int64_t r0 = 0; r0 < w.nRows; r0 += tileRows) {
            const int64_t rows = std::min(tileRows, w.nRows - r0);
            dequantizeToHalf(w.type, dw + static_cast<size_t>(r0) * wRowBytes, rows, w.nCols, tile_.as<__half>(),
                             stream_);
            checkBlas(
                cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(nTokens),
                             static_cast<int>(w.nCols), &alpha, tile_.get(), CUDA_R_16F, static_cast<int>(w.nCols),
                             xHalf_.get(), CUDA_R_16F, static_cast<int>(w.nCols), &beta, dy + r0, CUDA_R_32F,
                             static_cast<int>(w.nRows), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
        }
    }

    KvTables tables(const PagedKvLayer& layer, int firstBlock, int endBlock);

    cudaStream_t stream_ = nullptr;
    cublasHandle_t blas_ = nullptr;
    WeightCache weights_;
    KvMirror kv_;
    Scratch x_, y_, out_, ints_, actQ_, actD_, actS_, actBsums_, actF_, xHalf_, tile_, blockTable_, partial_;
    std::vector<uint8_t*> hostTable_;
};

// Device block tables for blocks [0, endBlock) of a layer (entries below firstBlock, outside
// every token's window, stay null), K table then V table in one device buffer.
KvTables CudaBackend::tables(const PagedKvLayer& layer, int firstBlock, int endBlock) {
    const size_t rowSize = kvRowBytes(layer);
    hostTable_.assign(static_cast<size_t>(2 * endBlock), nullptr);
    for (int b = firstBlock; b < endBlock; ++b) {
        hostTable_[static_cast<size_t>(b)] = kv_.deviceBlock(layer.kBlocks[b], layer.blockSize, rowSize);
        hostTable_[static_cast<size_t>(endBlock + b)] = kv_.deviceBlock(layer.vBlocks[b], layer.blockSize, rowSize);
    }
    blockTable_.reserve(hostTable_.size() * sizeof(uint8_t*));
    check(cudaMemcpyAsync(blockTable_.get(), hostTable_.data(), hostTable_.size() * sizeof(uint8_t*),
                          cudaMemcpyHostToDevice, stream_),
          "upload");
    // The table buffer is reused by the next call: wait until this one has been read.
    KvTables t;
    t.kBlocks = blockTable_.as<uint8_t*>();
    t.vBlocks = blockTable_.as<uint8_t*>() + endBlock;
    t.blockSize = layer.blockSize;
    t.rowStride = layer.rowStride;
    t.rowBytes = rowSize;
    t.q8 = layer.type == DType::Q8_0;
    return t;
}

void CudaBackend::kvWrite(const PagedKvLayer& layer, const float* k, const float* v, const int32_t* positions,
                          int64_t nTokens) {
    if (nTokens <= 0) return;
    // prefersDimMajorK() and prefersHeadMajorV() are false: the engine keeps K and V rows
    // token-major for CUDA.
    if (layer.kDimMajor || layer.vHeadDim != 0)
        throw std::runtime_error("CUDA reads and writes K and V rows token-major only");
    int minPos = positions[0], maxPos = positions[0];
    for (int64_t t = 0; t < nTokens; ++t) {
        minPos = std::min(minPos, positions[t]);
        maxPos = std::max(maxPos, positions[t]);
    }
    const int firstBlock = minPos / layer.blockSize, endBlock = maxPos / layer.blockSize + 1;
    const KvTables t = tables(layer, firstBlock, endBlock);
    for (int b = firstBlock; b < endBlock; ++b) {  // before the write: rows the host changed meanwhile
        kv_.verify(layer.kBlocks[b], t.rowBytes);
        kv_.verify(layer.vBlocks[b], t.rowBytes);
    }
    float* dk = upload(x_, k, nTokens * layer.rowStride);
    float* dv = upload(y_, v, nTokens * layer.rowStride);
    const int32_t* dp = uploadInts(ints_, positions, nTokens);
    cuda::kvWrite(t, dk, dv, dp, nTokens, stream_);
    // Copy the written rows back to the host blocks (authoritative for export), in runs of
    // consecutive slots of one block.
    for (int64_t i = 0; i < nTokens;) {
        const int block = positions[i] / layer.blockSize, slot = positions[i] % layer.blockSize;
        int64_t j = i + 1;
        while (j < nTokens && positions[j] == positions[j - 1] + 1 && positions[j] / layer.blockSize == block) ++j;
        kv_.wroteRows(layer.kBlocks[block], slot, static_cast<int>(j - i), t.rowBytes, stream_);
        kv_.wroteRows(layer.vBlocks[block], slot, static_cast<int>(j - i), t.rowBytes, stream_);
        i = j;
    }
    check(cudaGetLastError(), "launching the KV write");
    check(cudaStreamSynchronize(stream_), "writing KV rows");
    for (int b = firstBlock; b < endBlock; ++b) {
        kv_.remember(layer.kBlocks[b], t.rowBytes);
        kv_.remember(layer.vBlocks[b], t.rowBytes);
    }
}

void CudaBackend::attention(const PagedKvLayer& layer, const AttentionShape& shape, const float* q,
                            const int32_t* positions, int64_t nTokens, float* out) {
    if (nTokens <= 0) return;
    if (shape.headDim > 256 || shape.headDim % 32 != 0)
        throw std::runtime_error("CUDA attention needs a head size that is a multiple of 32, at most 256");
    if (layer.kDimMajor || layer.vHeadDim != 0)
        throw std::runtime_error("CUDA reads and writes K and V rows token-major only");
    int maxPos = 0, minFirst = positions[0];
    for (int64_t i = 0; i < nTokens; ++i) {
        maxPos = std::max(maxPos, positions[i]);
        const int first = shape.slidingWindow > 0 ? std::max(0, positions[i] + 1 - shape.slidingWindow) : 0;
        minFirst = std::min(minFirst, first);
    }
    const int firstBlock = minFirst / layer.blockSize, endBlock = maxPos / layer.blockSize + 1;
    const KvTables t = tables(layer, firstBlock, endBlock);
    for (int b = firstBlock; b < endBlock; ++b) {  // rows the host holds but the device never wrote
        const int nSlots = b + 1 < endBlock ? layer.blockSize : maxPos % layer.blockSize + 1;
        kv_.syncRows(layer.kBlocks[b], nSlots, t.rowBytes, stream_);
        kv_.syncRows(layer.vBlocks[b], nSlots, t.rowBytes, stream_);
    }
    AttentionParams p;
    p.nHeads = shape.nHeads;
    p.nKvHeads = shape.nKvHeads;
    p.headDim = shape.headDim;
    p.scale = shape.scale;
    p.slidingWindow = shape.slidingWindow;
    p.softcap = shape.softcap;
    p.nSplits = (maxPos + kAttentionSplit) / kAttentionSplit;
    const int64_t qSize = nTokens * shape.nHeads * shape.headDim;
    float* dq = upload(x_, q, qSize);
    const int32_t* dp = uploadInts(ints_, positions, nTokens);
    partial_.reserveFloats(nTokens * shape.nHeads * p.nSplits * (shape.headDim + 2));
    float* dout = out_.reserveFloats(qSize);
    cuda::attention(t, p, dq, dp, nTokens, partial_.as<float>(), dout, stream_);
    download(out, dout, qSize);
}

}  // namespace

Backend* createBackend() { return new CudaBackend(); }

}  // namespace hearth::cuda
