// The CUDA backend over device memory (Backend::operatesOnHostMemory is false): the engine
// keeps activations, the step's inputs, norm vectors, the paged KV pool and the logits in
// buffers from allocate(), each matrix is uploaded once at load (packWeight), and every operator
// launches its kernels of ops.h on one stream on the pointers it gets, without copies or waits.
// Data crosses to the host only through upload() and download(); a download waits for the
// stream (the one wait of a step, for its logits). A decode step (fewer rows than go to cuBLAS)
// is one CUDA graph: the first step of a key runs call by call (sizing every scratch buffer),
// the second is captured, later ones replay it (Backend::beginStep); HEARTH_CUDA_GRAPHS=0 runs
// every step call by call. HEARTH_CUDA_PROFILE=1 times every operator alone (graphs off) and
// prints the sums by operator and shape to stderr when the backend is destroyed.
#include "kernels/cuda/plugin/cuda_backend.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cuda/plugin/device_memory.h"
#include "kernels/cuda/plugin/ops.h"

namespace hearth::cuda {
namespace {

// Batches of more tokens than this go through cuBLAS (F16 tiles); fewer use the dp4a
// mat-vec, whose result for a token does not depend on its batch (decode and verification).
constexpr int64_t kGemmMinTokens = 16;
static_assert(kGemmMinTokens - 1 <= kMaxMatvecTokens, "every batch below kGemmMinTokens fits the mat-vec");
// Rows of a weight matrix dequantized to F16 per cuBLAS call (bounds the tile buffer).
constexpr size_t kTileBytes = size_t{64} << 20;
// WeightView::packed.layout of a matrix uploaded by packWeight: the file's rows, in device memory,
// or rows the planar decode mat-vec reads in 16-byte loads (device_quants.cuh: planarRows; the
// 32-element block types and Q6_K as planes, Q4_K as the file has them).
constexpr uint32_t kDeviceRows = 0x43554441;  // "CUDA"
constexpr uint32_t kDevicePlanar = 0x43554450;  // "CUDP"
// Rows rewritten as planes on the host per piece (bounds the staging buffer).
constexpr size_t kPlanarPieceBytes = size_t{16} << 20;

void checkBlas(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string("cuBLAS: ") + what + " failed (status " + std::to_string(status) + ")");
}

// A buffer from allocate(): freed with cudaFree, which needs no backend (the plugin stays loaded).
class DeviceBackendBuffer final : public BackendBuffer {
public:
    DeviceBackendBuffer(void* p, size_t bytes) : BackendBuffer(p, bytes) {}
    ~DeviceBackendBuffer() override { cudaFree(data()); }
};

struct DeviceWeight final : WeightBuffer {
    DeviceBuffer rows;
};

class CudaBackend final : public Backend {
public:
    CudaBackend() {
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        checkBlas(cublasCreate(&blas_), "cublasCreate");
        checkBlas(cublasSetStream(blas_, stream_), "cublasSetStream");
        launchesAtStart_ = launches();
        const char* profile = std::getenv("HEARTH_CUDA_PROFILE");
        profile_ = profile != nullptr && std::string_view(profile) == "1";
        const char* fused = std::getenv("HEARTH_CUDA_FUSED");
        fused_ = !(fused != nullptr && std::string_view(fused) == "0");
        if (const char* rows = std::getenv("HEARTH_CUDA_ROWS_PER_PASS"); rows != nullptr && std::atoi(rows) >= 1)
            rowsPerPass_ = std::atoi(rows);
        if (profile_) {
            check(cudaEventCreate(&profileStart_), "cudaEventCreate");
            check(cudaEventCreate(&profileStop_), "cudaEventCreate");
        }
    }
    ~CudaBackend() override {
        if (profile_) printProfile();
        if (capture_ != nullptr) {  // a step that threw while captured: end it, keep nothing
            cudaGraph_t graph = nullptr;
            cudaStreamEndCapture(stream_, &graph);
            if (graph != nullptr) cudaGraphDestroy(graph);
        }
        for (auto& [key, g] : graphs_)
            if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
        cudaStreamSynchronize(stream_);
        if (profileStart_ != nullptr) cudaEventDestroy(profileStart_), cudaEventDestroy(profileStop_);
        cublasDestroy(blas_);
        cudaStreamDestroy(stream_);
    }

    std::string name() const override { return "CUDA"; }
    bool operatesOnHostMemory() const override { return false; }
    // A prompt pass dequantizes every matrix to F16 tiles once (gemm): 512 rows a pass make that
    // a quarter of what 128 did, for 512 x (largest row: 14,336 for the 8B shape) floats of
    // activations. HEARTH_CUDA_ROWS_PER_PASS=N sets it.
    int64_t rowsPerPass() const override { return rowsPerPass_; }

    std::unique_ptr<BackendBuffer> allocate(size_t bytes) override {
        void* p = nullptr;
        if (cudaMalloc(&p, std::max<size_t>(bytes, 64)) != cudaSuccess) {
            cudaGetLastError();  // out of memory is not sticky: clear it, the caller reports it
            return nullptr;
        }
        return std::make_unique<DeviceBackendBuffer>(p, bytes);
    }
    // From pageable host memory cudaMemcpyAsync returns once the bytes are staged, so the caller
    // may reuse its buffer at once; the copy runs in stream order with the kernels.
    void upload(void* dst, const void* hostSrc, size_t bytes) override {
        if (bytes == 0) return;
        if (capture_ != nullptr) throw std::logic_error("CUDA: an upload inside a captured step");
        check(cudaMemcpyAsync(dst, hostSrc, bytes, cudaMemcpyHostToDevice, stream_), "upload");
        ++counts_.uploads, counts_.bytesUp += bytes;
    }
    void download(void* hostDst, const void* src, size_t bytes) override {
        if (bytes == 0) return;
        check(cudaGetLastError(), "launching a kernel");
        check(cudaMemcpyAsync(hostDst, src, bytes, cudaMemcpyDeviceToHost, stream_), "download");
        check(cudaStreamSynchronize(stream_), "the kernels before a download");
        ++counts_.downloads, counts_.bytesDown += bytes, ++counts_.waits;
    }
    void copy(void* dst, const void* src, size_t bytes) override {
        if (bytes == 0) return;
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_), "copy");
        ++counts_.copies, counts_.bytesCopied += bytes;
    }
    BackendCounters counters() const override {
        BackendCounters c = counts_;
        c.launches = launches() - launchesAtStart_;
        return c;
    }

    size_t freeMemory() const override {
        size_t free = 0, total = 0;
        return cudaMemGetInfo(&free, &total) == cudaSuccess ? free : 0;
    }

    StepMode beginStep(std::string_view key, int64_t nRows) override {
        if (capture_ != nullptr || replay_ != nullptr) throw std::logic_error("CUDA: beginStep inside a step");
        const char* env = std::getenv("HEARTH_CUDA_GRAPHS");
        if (nRows >= kGemmMinTokens || profile_ || (env != nullptr && std::string_view(env) == "0"))
            return StepMode::Run;
        auto it = graphs_.find(key);
        if (it == graphs_.end()) it = graphs_.emplace(std::string(key), Graph{}).first;
        Graph& g = it->second;
        if (g.exec != nullptr && g.generation == generation_) {
            replay_ = &g;
            return StepMode::Replay;
        }
        if (g.generation != generation_ || !g.ranOnce) {  // run it first: every scratch buffer sized
            if (g.exec != nullptr) cudaGraphExecDestroy(g.exec), g.exec = nullptr;
            g.generation = generation_;
            g.ranOnce = true;
            return StepMode::Run;
        }
        check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        capture_ = &g;
        return StepMode::Record;
    }
    void endStep() override {
        if (replay_ != nullptr) {
            Graph& g = *replay_;
            replay_ = nullptr;
            check(cudaGraphLaunch(g.exec, stream_), "launching a step's graph");
            countLaunches(1);
            return;
        }
        if (capture_ == nullptr) return;
        Graph& g = *capture_;
        capture_ = nullptr;
        cudaGraph_t graph = nullptr;
        check(cudaStreamEndCapture(stream_, &graph), "capturing a step");
        const cudaError_t made = cudaGraphInstantiate(&g.exec, graph, 0);
        cudaGraphDestroy(graph);
        check(made, "cudaGraphInstantiate");
        check(cudaGraphLaunch(g.exec, stream_), "launching a step's graph");
        countLaunches(1);
    }

    // The file's rows, uploaded as they are (the kernels read GGUF's blocks), or as planar rows
    // where the decode mat-vec has them (HEARTH_CUDA_PLANAR=0: never), rewritten piece by piece.
    std::unique_ptr<WeightBuffer> packWeight(
        WeightView& w, const std::function<void(std::span<const uint8_t> rows)>& released) override {
        const size_t rowSize = rowBytes(w.type, w.nCols);
        const size_t bytes = rowSize * static_cast<size_t>(w.nRows);
        auto weight = std::make_unique<DeviceWeight>();
        weight->rows = DeviceBuffer(bytes);
        const auto* src = static_cast<const uint8_t*>(w.data);
        const bool planar = choosePlanarRows(w.type, w.nCols);
        if (!planar) {
            check(cudaMemcpy(weight->rows.get(), src, bytes, cudaMemcpyHostToDevice), "uploading a weight");
            if (released) released({src, bytes});
        } else {
            const int64_t pieceRows = std::max<int64_t>(1, static_cast<int64_t>(kPlanarPieceBytes / rowSize));
            std::vector<uint8_t> staged(static_cast<size_t>(std::min(pieceRows, w.nRows)) * rowSize);
            for (int64_t r0 = 0; r0 < w.nRows; r0 += pieceRows) {
                const int64_t n = std::min(pieceRows, w.nRows - r0);
                const size_t at = static_cast<size_t>(r0) * rowSize, pieceBytes = static_cast<size_t>(n) * rowSize;
                toPlanarRows(w.type, src + at, n, w.nCols, staged.data());
                check(cudaMemcpy(weight->rows.as<uint8_t>() + at, staged.data(), pieceBytes, cudaMemcpyHostToDevice),
                      "uploading a weight");
                if (released) released({src + at, pieceBytes});
            }
        }
        w.packed = {weight->rows.get(), planar ? kDevicePlanar : kDeviceRows, bytes};
        return weight;
    }

    void matmul(const WeightView& w, const float* x, int64_t nTokens, float* y) override {
        if (nTokens <= 0) return;
        const uint8_t* dw = rows(w);
        timed([&] { return "matmul " + shapeKey(w, nTokens); },
              [&] {
                  if (nTokens >= kGemmMinTokens) return gemm(w, dw, x, nTokens, y);
                  float* const ys[] = {y};
                  products(std::span(&w, 1), quantized(w, x, nTokens), nTokens, ys, false, nullptr);
              });
    }
    // Matrices of one type (Q/K/V, gate/up) under the mat-vec: x quantized once for all of them.
    void matmulMany(std::span<const WeightView> ws, const float* x, int64_t nTokens,
                    std::span<float* const> ys) override {
        if (nTokens <= 0 || nTokens >= kGemmMinTokens || !oneInput(ws)) return Backend::matmulMany(ws, x, nTokens, ys);
        timed([&] { return "matmulMany " + std::to_string(ws.size()) + "x " + shapeKey(ws[0], nTokens); },
              [&] { products(ws, quantized(ws[0], x, nTokens), nTokens, ys, false, nullptr); });
    }
    // Under the mat-vec: the normalised or gated input made and quantized in one launch
    // (prepareActivations), and the residual added by the planar mat-vec as it stores
    // (MatvecJobs::accumulate). HEARTH_CUDA_FUSED=0: the separate launches.
    void matmulFused(const MatmulInput& in, std::span<const WeightView> ws, int64_t nTokens, std::span<float* const> ys,
                     bool accumulate, float* sums) override {
        if (nTokens <= 0 || nTokens >= kGemmMinTokens || !oneInput(ws) || !fused_ || (accumulate && ws.size() != 1))
            return Backend::matmulFused(in, ws, nTokens, ys, accumulate, sums);
        timed([&] { return "matmulFused " + std::to_string(ws.size()) + "x " + shapeKey(ws[0], nTokens); },
              [&] {
                  const WeightView& w = ws[0];
                  ActBuffers a;
                  if (in.kind == MatmulInput::Kind::Plain) {
                      a = quantized(w, in.x, nTokens);
                  } else {
                      a = activationBuffers(w, nTokens);
                      const PrepareKind kind = in.kind == MatmulInput::Kind::RmsNorm ? PrepareKind::RmsNorm
                          : in.kind == MatmulInput::Kind::SwiGlu                     ? PrepareKind::SwiGlu
                                                                                     : PrepareKind::GeGlu;
                      prepareActivations(kind, w.type, in.x, in.normWeight, in.eps, in.up, nTokens, w.nCols,
                                         in.prepared, a, stream_);
                  }
                  products(ws, a, nTokens, ys, accumulate, sums);
              });
    }

    void embeddingRows(const WeightView& table, const int32_t* ids, int64_t n, float* out) override {
        timed([&] { return std::string("embeddingRows"); },
              [&] { cuda::embeddingRows(table.type, planar(table), rows(table), table.nCols, ids, n, out, stream_); });
    }
    void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y) override {
        timed([&] { return "rmsNorm " + std::to_string(nRows) + "x" + std::to_string(n); },
              [&] { cuda::rmsNorm(x, w, nRows, n, eps, y, stream_); });
    }
    void rope(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions, float freqBase,
              RopeStyle style, const float* freqFactors) override {
        timed([&] { return "rope " + std::to_string(nTokens) + "x" + std::to_string(nHeads); },
              [&] {
                  cuda::rope(x, nTokens, nHeads, headDim, nRot, positions, freqBase, freqFactors,
                             style == RopeStyle::Pairwise, stream_);
              });
    }
    void kvWrite(const PagedKvLayer& layer, const float* k, const float* v, const int32_t* positions,
                 int64_t nTokens) override {
        if (nTokens <= 0) return;
        timed([&] { return "kvWrite " + std::to_string(nTokens); },
              [&] { cuda::kvWrite(tables(layer), k, v, positions, nTokens, stream_); });
    }
    void kvWriteMany(std::span<const KvWriteCall> calls) override;
    void attention(const PagedKvLayer& layer, const AttentionShape& shape, const float* q, const int32_t* positions,
                   int64_t nTokens, float* out) override;
    void attentionMany(std::span<const AttentionCall> calls, const AttentionShape& shape) override;
    void swiglu(const float* gate, const float* up, int64_t n, float* out) override {
        timed([&] { return "swiglu " + std::to_string(n); }, [&] { cuda::swiglu(gate, up, n, out, stream_); });
    }
    void geglu(const float* gate, const float* up, int64_t n, float* out) override {
        timed([&] { return "geglu " + std::to_string(n); }, [&] { cuda::geglu(gate, up, n, out, stream_); });
    }
    void addRmsNormed(float* x, float* y, const float* w, int64_t nRows, int64_t n, float eps) override {
        if (!fused_) return Backend::addRmsNormed(x, y, w, nRows, n, eps);
        timed([&] { return "addRmsNormed " + std::to_string(nRows) + "x" + std::to_string(n); },
              [&] { cuda::addRmsNormed(x, y, w, nRows, n, eps, stream_); });
    }
    void qkRope(const QkRope& r, const int32_t* positions, int64_t nTokens) override {
        if (!fused_ || r.headDim > 1024) return Backend::qkRope(r, positions, nTokens);
        timed([&] { return "qkRope " + std::to_string(nTokens) + "x" + std::to_string(r.nHeads + r.nKvHeads); },
              [&] {
                  cuda::qkRope(r.q, r.k, r.nHeads, r.nKvHeads, r.headDim, r.nRot, r.qNorm, r.kNorm, r.eps, positions,
                               nTokens, r.freqBase, r.freqFactors, r.style == RopeStyle::Pairwise, r.attnFactor,
                               stream_);
              });
    }
    void add(float* x, const float* y, int64_t n) override {
        timed([&] { return "add " + std::to_string(n); }, [&] { cuda::add(x, y, n, stream_); });
    }
    void scale(float* x, int64_t nRows, int64_t rowStride, int64_t n, float s) override {
        timed([&] { return "scale " + std::to_string(nRows) + "x" + std::to_string(n); },
              [&] { cuda::scale(x, nRows, rowStride, n, s, stream_); });
    }
    void argmaxRows(const float* x, int64_t nRows, int64_t n, int32_t* out) override {
        timed([&] { return "argmaxRows " + std::to_string(nRows) + "x" + std::to_string(n); },
              [&] { cuda::argmaxRows(x, nRows, n, out, stream_); });
    }
    void topKRows(const float* x, int64_t nRows, int64_t n, int32_t k, TopEntry* out, float* lse) override {
        static_assert(sizeof(TopEntry) == sizeof(cuda::TopValue) &&
                      offsetof(TopEntry, value) == offsetof(cuda::TopValue, value));
        grow(topScratch_, cuda::topKScratchBytes(nRows, n, k));
        timed(
            [&] {
                return "topKRows " + std::to_string(nRows) + "x" + std::to_string(n) + " k " + std::to_string(k) +
                    (lse != nullptr ? " lse" : "");
            },
            [&] {
                cuda::topKRows(x, nRows, n, k, reinterpret_cast<cuda::TopValue*>(out), lse, topScratch_.get(), stream_);
            });
    }
    void softcap(float* x, int64_t n, float cap) override {
        timed([&] { return "softcap " + std::to_string(n); }, [&] { cuda::softcap(x, n, cap, stream_); });
    }

private:
    static std::string shapeKey(const WeightView& w, int64_t nTokens) {
        return std::string(dtypeInfo(w.type).name) + " " + std::to_string(w.nRows) + "x" + std::to_string(w.nCols) +
               (nTokens >= kGemmMinTokens ? " gemm" : " x" + std::to_string(nTokens));
    }

    // Runs an operator's launches; under HEARTH_CUDA_PROFILE its device time alone (events
    // around it, then a wait) is added to its key's sum.
    template <class Key, class Launch>
    void timed(const Key& key, const Launch& launch) {
        if (!profile_) return launch();
        check(cudaEventRecord(profileStart_, stream_), "cudaEventRecord");
        launch();
        check(cudaEventRecord(profileStop_, stream_), "cudaEventRecord");
        check(cudaEventSynchronize(profileStop_), "cudaEventSynchronize");
        float ms = 0.0f;
        check(cudaEventElapsedTime(&ms, profileStart_, profileStop_), "cudaEventElapsedTime");
        ProfileEntry& e = profileSums_[key()];
        e.ms += ms;
        ++e.calls;
    }
    void printProfile() const {
        double total = 0.0;
        for (const auto& [key, e] : profileSums_) total += e.ms;
        std::vector<std::pair<std::string, ProfileEntry>> byTime(profileSums_.begin(), profileSums_.end());
        std::sort(byTime.begin(), byTime.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
        std::fprintf(stderr, "CUDA profile (HEARTH_CUDA_PROFILE=1): %.2f ms of operators\n", total);
        for (const auto& [key, e] : byTime)
            std::fprintf(stderr, "  %-40s %7llu calls %10.3f ms %9.2f us/call %5.1f%%\n", key.c_str(),
                         static_cast<unsigned long long>(e.calls), e.ms, 1e3 * e.ms / static_cast<double>(e.calls),
                         total > 0 ? 100.0 * e.ms / total : 0.0);
    }

    // A matrix's device rows: its packWeight copy.
    static const uint8_t* rows(const WeightView& w) {
        if ((w.packed.layout != kDeviceRows && w.packed.layout != kDevicePlanar) || w.packed.data == nullptr)
            throw std::runtime_error("CUDA: a matrix was not uploaded at load (packWeight)");
        return static_cast<const uint8_t*>(w.packed.data);
    }
    static bool planar(const WeightView& w) { return w.packed.layout == kDevicePlanar; }

    // Whether the matrices take one quantized input (Q/K/V, gate/up): one width, and types whose
    // activations the reference quantizes alike (Q5_0 and Q8_0: Q8_0 blocks; Q4_K and Q6_K: Q8_K).
    static bool oneInput(std::span<const WeightView> ws) {
        return !ws.empty() && std::all_of(ws.begin(), ws.end(), [&](const WeightView& w) {
            return w.nCols == ws[0].nCols && sharesActivations(w.type, ws[0].type);
        });
    }

    // ys[i] = (or += with accumulate: one matrix) the products of ws[i] with the quantized a,
    // under the mat-vec: planar rows of one type up to four matrices a launch; GGUF's blocks one
    // a launch, accumulated through sums and an add.
    void products(std::span<const WeightView> ws, const ActBuffers& a, int64_t nTokens, std::span<float* const> ys,
                  bool accumulate, float* sums) {
        if (accumulate && !planar(ws[0])) {
            matvec(ws[0].type, rows(ws[0]), ws[0].nRows, ws[0].nCols, a, nTokens, sums, stream_);
            cuda::add(ys[0], sums, nTokens * ws[0].nRows, stream_);
            return;
        }
        MatvecJobs jobs;
        DType type = ws[0].type;
        const auto launch = [&] {
            if (jobs.count > 0) matvecPlanar(type, jobs, ws[0].nCols, a, nTokens, stream_);
            jobs = MatvecJobs{};
            jobs.accumulate = accumulate;
        };
        jobs.accumulate = accumulate;
        for (size_t i = 0; i < ws.size(); ++i) {
            if (!planar(ws[i])) {
                matvec(ws[i].type, rows(ws[i]), ws[i].nRows, ws[i].nCols, a, nTokens, ys[i], stream_);
                continue;
            }
            if (jobs.count == kMaxMatvecJobs || (jobs.count > 0 && ws[i].type != type)) launch();
            type = ws[i].type;
            jobs.w[jobs.count] = rows(ws[i]);
            jobs.nRows[jobs.count] = ws[i].nRows;
            jobs.y[jobs.count] = ys[i];
            ++jobs.count;
        }
        launch();
    }

    // The scratch for nTokens rows of activations quantized for w (reused by the next call).
    ActBuffers activationBuffers(const WeightView& w, int64_t nTokens) {
        const ActSizes sizes = actSizes(nTokens, w.nCols);
        grow(actQ_, sizes.q);
        grow(actD_, sizes.d);
        grow(actS_, sizes.s);
        grow(actBsums_, sizes.bsums);
        grow(actF_, sizes.f);
        return {actQ_.as<int8_t>(), actD_.as<float>(), actS_.as<float>(), actBsums_.as<int16_t>(), actF_.as<float>()};
    }
    // x quantized as the reference quantizes it for w's type.
    ActBuffers quantized(const WeightView& w, const float* dx, int64_t nTokens) {
        const ActBuffers a = activationBuffers(w, nTokens);
        quantizeActivations(w.type, dx, nTokens, w.nCols, a, stream_);
        return a;
    }

    // y = x · Wᵀ with W dequantized to F16 tiles of rows and x quantized as the reference does
    // (8-bit blocks, then q·d as halves); F32 accumulation (cuBLAS picks the reduction order
    // by shape, so prefill is close to, not bitwise, decode).
    void gemm(const WeightView& w, const uint8_t* dw, const float* dx, int64_t nTokens, float* dy) {
        grow(xHalf_, static_cast<size_t>(nTokens * w.nCols) * sizeof(__half));
        activationsToHalf(w.type, quantized(w, dx, nTokens), nTokens * w.nCols, xHalf_.as<__half>(), stream_);
        const int64_t tileRows =
            std::max<int64_t>(1, static_cast<int64_t>(kTileBytes / (static_cast<size_t>(w.nCols) * 2)));
        const size_t wRowBytes = rowBytes(w.type, w.nCols);
        grow(tile_, static_cast<size_t>(std::min(tileRows, w.nRows) * w.nCols) * sizeof(__half));
        const float alpha = 1.0f, beta = 0.0f;
        for (int64_t r0 = 0; r0 < w.nRows; r0 += tileRows) {
            const int64_t n = std::min(tileRows, w.nRows - r0);
            dequantizeToHalf(w.type, planar(w), dw + static_cast<size_t>(r0) * wRowBytes, n, w.nCols,
                             tile_.as<__half>(), stream_);
            checkBlas(
                cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(nTokens),
                             static_cast<int>(w.nCols), &alpha, tile_.get(), CUDA_R_16F, static_cast<int>(w.nCols),
                             xHalf_.get(), CUDA_R_16F, static_cast<int>(w.nCols), &beta, dy + r0, CUDA_R_32F,
                             static_cast<int>(w.nRows), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
            countLaunches(1);
        }
    }

    // Scratch that recorded graphs point into: growing it (a new address) retires them all.
    // Never while a step is captured: its first run sized every buffer it needs.
    void qkRopeKvWrite(const QkRope& r, const int32_t* positions, int64_t nTokens,
                       std::span<const KvWriteCall> writes) override;
    void grow(DeviceBuffer& buffer, size_t bytes) {
        if (bytes <= buffer.size()) return;
        if (capture_ != nullptr)
            throw std::logic_error("CUDA: a captured step needed more scratch than its first run");
        buffer.reserve(bytes);
        ++generation_;
    }

    // Whether two layers' rows have one layout (such calls can share a launch).
    static bool sameLayout(const PagedKvLayer& a, const PagedKvLayer& b) {
        return a.blockSize == b.blockSize && a.rowStride == b.rowStride && a.type == b.type &&
            a.kDimMajor == b.kDimMajor && a.vHeadDim == b.vHeadDim;
    }
    // Of a step's calls (kvWriteMany, attentionMany): those with rows whose block tables are in
    // device memory and share the first one's layout, which can go in one launch; alone(call)
    // runs each other one by itself.
    template <class Call, class Alone>
    static std::vector<const Call*> launchable(std::span<const Call> calls, const Alone& alone) {
        std::vector<const Call*> together;
        for (const Call& c : calls) {
            if (c.nTokens <= 0) continue;
            if (c.layer->tablesOnBackend == nullptr ||
                (!together.empty() && !sameLayout(*together[0]->layer, *c.layer)))
                alone(c);
            else together.push_back(&c);
        }
        return together;
    }
    // The KvCalls part of a launch of these calls (their tables and row starts); returns the
    // layout they share.
    template <class Call>
    KvTables fillKvCalls(std::span<const Call* const> group, KvCalls& rows) {
        KvTables layout;
        for (const Call* c : group) {
            layout = tables(*c->layer);
            rows.kBlocks[rows.count] = layout.kBlocks, rows.vBlocks[rows.count] = layout.vBlocks;
            rows.rowStart[rows.count + 1] = rows.rowStart[rows.count] + static_cast<int>(c->nTokens);
            ++rows.count;
        }
        return layout;
    }
    // A launch of these writes (KvWriteRows: each call's tables, rows, K and V rows and
    // positions); returns the layout they share.
    KvTables fillKvWrites(std::span<const KvWriteCall* const> group, KvWriteRows& rows) {
        const KvTables layout = fillKvCalls(group, rows);
        for (size_t i = 0; i < group.size(); ++i)
            rows.k[i] = group[i]->k, rows.v[i] = group[i]->v, rows.positions[i] = group[i]->positions;
        return layout;
    }

    // The layer's block tables in device memory: the step's (PagedKvLayer::tablesOnBackend) or,
    // for a layer whose tables only the host holds (a token tree's private blocks), uploaded
    // here.
    KvTables tables(const PagedKvLayer& layer);

    cudaStream_t stream_ = nullptr;
    cublasHandle_t blas_ = nullptr;
    DeviceBuffer actQ_, actD_, actS_, actBsums_, actF_, xHalf_, tile_, blockTable_, partial_, topScratch_;
    std::vector<f16_t*> hostTable_;
    BackendCounters counts_;
    uint64_t launchesAtStart_ = 0;
    // Decode steps as graphs, by key (Backend::beginStep); generation_ counts scratch growths.
    struct Graph {
        cudaGraphExec_t exec = nullptr;
        uint64_t generation = 0;
        bool ranOnce = false;
    };
    std::map<std::string, Graph, std::less<>> graphs_;
    Graph* capture_ = nullptr;  // between beginStep and endStep
    Graph* replay_ = nullptr;
    uint64_t generation_ = 1;
    struct ProfileEntry {
        double ms = 0.0;
        uint64_t calls = 0;
    };
    bool profile_ = false;
    bool fused_ = true;  // HEARTH_CUDA_FUSED=0: matmulFused as separate launches
    int64_t rowsPerPass_ = 512;
    cudaEvent_t profileStart_ = nullptr, profileStop_ = nullptr;
    std::map<std::string, ProfileEntry> profileSums_;
};

KvTables CudaBackend::tables(const PagedKvLayer& layer) {
    // prefersDimMajorK() and prefersHeadMajorV() are false: the engine keeps K and V rows
    // token-major for CUDA.
    if (layer.kDimMajor || layer.vHeadDim != 0)
        throw std::runtime_error("CUDA reads and writes K and V rows token-major only");
    if (layer.nBlocks <= 0) throw std::runtime_error("CUDA: a KV layer without the length of its block tables");
    KvTables t;
    t.blockSize = layer.blockSize;
    t.rowStride = layer.rowStride;
    t.rowBytes = kvRowBytes(layer);
    t.q8 = layer.type == DType::Q8_0;
    const auto n = static_cast<size_t>(layer.nBlocks);
    if (layer.tablesOnBackend != nullptr) {
        t.kBlocks = reinterpret_cast<uint8_t* const*>(layer.tablesOnBackend);
        t.vBlocks = t.kBlocks + n;
        return t;
    }
    hostTable_.assign(layer.kBlocks, layer.kBlocks + n);
    hostTable_.insert(hostTable_.end(), layer.vBlocks, layer.vBlocks + n);
    // Stream order keeps this buffer's earlier contents until the kernels that read them ran.
    grow(blockTable_, hostTable_.size() * sizeof(f16_t*));
    upload(blockTable_.get(), hostTable_.data(), hostTable_.size() * sizeof(f16_t*));
    t.kBlocks = blockTable_.as<uint8_t*>();
    t.vBlocks = t.kBlocks + n;
    return t;
}

// The writes whose tables are in device memory, up to kMaxKvCalls a launch.
void CudaBackend::kvWriteMany(std::span<const KvWriteCall> calls) {
    const std::vector<const KvWriteCall*> together =
        launchable(calls, [&](const KvWriteCall& c) { kvWrite(*c.layer, c.k, c.v, c.positions, c.nTokens); });
    for (size_t c0 = 0; c0 < together.size(); c0 += kMaxKvCalls) {
        const auto group = std::span(together).subspan(c0, std::min<size_t>(kMaxKvCalls, together.size() - c0));
        KvWriteRows rows;
        const KvTables layout = fillKvWrites(group, rows);
        timed(
            [&] {
                return "kvWrite " + std::to_string(group.size()) + " calls, " +
                    std::to_string(rows.rowStart[rows.count]) + " rows";
            },
            [&] { cuda::kvWriteRows(layout, rows, stream_); });
    }
}

// One launch (cuda::qkRopeKvWrite) where the writes could share one kvWriteRows launch and
// their K rows are r.k's rows in order; else the two calls.
void CudaBackend::qkRopeKvWrite(const QkRope& r, const int32_t* positions, int64_t nTokens,
                                std::span<const KvWriteCall> writes) {
    const int64_t kvDim = int64_t{r.nKvHeads} * r.headDim;
    std::vector<const KvWriteCall*> group;
    int64_t row = 0;
    bool one = fused_ && r.headDim <= 1024 && nTokens > 0;
    for (const KvWriteCall& c : writes) {
        if (c.nTokens <= 0) continue;
        one = one && c.layer->tablesOnBackend != nullptr && (group.empty() || sameLayout(*group[0]->layer, *c.layer)) &&
            c.k == r.k + row * kvDim;
        group.push_back(&c);
        row += c.nTokens;
    }
    one = one && row == nTokens && !group.empty() && group.size() <= static_cast<size_t>(kMaxKvCalls) &&
        group[0]->layer->rowStride == kvDim && (group[0]->layer->type != DType::Q8_0 || r.headDim % 32 == 0);
    if (!one) return Backend::qkRopeKvWrite(r, positions, nTokens, writes);
    KvWriteRows rows;
    const KvTables layout = fillKvWrites(group, rows);
    timed(
        [&] {
            return "qkRopeKvWrite " + std::to_string(nTokens) + " rows, " + std::to_string(group.size()) + " calls";
        },
        [&] {
            cuda::qkRopeKvWrite(r.q, r.k, r.nHeads, r.nKvHeads, r.headDim, r.nRot, r.qNorm, r.kNorm, r.eps, positions,
                                nTokens, r.freqBase, r.freqFactors, r.style == RopeStyle::Pairwise, r.attnFactor,
                                layout, rows, stream_);
        });
}

// The launch's parameters for a layer shape. Positions are in device memory: the splits cover
// every position the tables hold (`held`, the longest call's), and a split past a token's
// position (or before its window) contributes nothing.
AttentionParams attentionParams(const AttentionShape& shape, int64_t held) {
    if (shape.headDim > 256 || shape.headDim % 32 != 0)
        throw std::runtime_error("CUDA attention needs a head size that is a multiple of 32, at most 256");
    AttentionParams p;
    p.nHeads = shape.nHeads;
    p.nKvHeads = shape.nKvHeads;
    p.headDim = shape.headDim;
    p.scale = shape.scale;
    p.slidingWindow = shape.slidingWindow;
    p.softcap = shape.softcap;
    p.nSplits = static_cast<int>((held + kAttentionSplit - 1) / kAttentionSplit);
    return p;
}

void CudaBackend::attention(const PagedKvLayer& layer, const AttentionShape& shape, const float* q,
                            const int32_t* positions, int64_t nTokens, float* out) {
    if (nTokens <= 0) return;
    const int64_t held = int64_t{layer.nBlocks} * layer.blockSize;
    const AttentionParams p = attentionParams(shape, held);
    const KvTables t = tables(layer);
    grow(partial_, static_cast<size_t>(nTokens * shape.nHeads * p.nSplits * (shape.headDim + 2)) * sizeof(float));
    timed([&] { return "attention " + std::to_string(nTokens) + " rows, " + std::to_string(held) + " positions"; },
          [&] { cuda::attention(t, p, q, positions, nTokens, partial_.as<float>(), out, stream_); });
}

// The calls whose block tables are in device memory (a step's sequences) go up to kMaxKvCalls a
// launch; the others (a token tree's private blocks, tables on the host) one by one.
void CudaBackend::attentionMany(std::span<const AttentionCall> calls, const AttentionShape& shape) {
    const auto alone = [&](const AttentionCall& c) { attention(*c.layer, shape, c.q, c.positions, c.nTokens, c.out); };
    const std::vector<const AttentionCall*> together = launchable(calls, alone);
    for (size_t c0 = 0; c0 < together.size(); c0 += kMaxKvCalls) {
        const auto group = std::span(together).subspan(c0, std::min<size_t>(kMaxKvCalls, together.size() - c0));
        if (group.size() == 1) {
            alone(*group[0]);
            continue;
        }
        AttentionRows rows;
        const KvTables layout = fillKvCalls(group, rows);
        int64_t held = 0;
        for (size_t i = 0; i < group.size(); ++i) {
            const AttentionCall& c = *group[i];
            rows.q[i] = c.q, rows.positions[i] = c.positions, rows.out[i] = c.out;
            held = std::max(held, int64_t{c.layer->nBlocks} * c.layer->blockSize);
        }
        const AttentionParams p = attentionParams(shape, held);
        const int64_t nRows = rows.rowStart[rows.count];
        grow(partial_, static_cast<size_t>(nRows * shape.nHeads * p.nSplits * (shape.headDim + 2)) * sizeof(float));
        timed(
            [&] { return "attention " + std::to_string(group.size()) + " calls, " + std::to_string(nRows) + " rows"; },
            [&] { cuda::attentionRows(layout, p, rows, partial_.as<float>(), stream_); });
    }
}

}  // namespace

Backend* createBackend() { return new CudaBackend(); }

}  // namespace hearth::cuda
