// The compute backend interface: one call per operator over host memory, and the registry
// that lists every backend with whether it is available (and why not). The engine computes
// through a Backend; implementations live in kernels/cpu/ and kernels/cuda/.
// Thread-safety: a Backend is used by one thread at a time (the engine thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend_problem.h"
#include "kernels/dtype.h"

namespace hearth {

// A copy of a weight's rows in a layout a backend made for its kernels at load
// (Backend::packWeight): the backend that made it reads data instead of the file's rows; any
// other backend ignores it. layout names the layout (a backend's own constant, 0: none); bytes is
// the copy's size in host memory (a disk cache of copies, engine/model/pack_cache.h, saves them).
struct PackedRows {
    const void* data = nullptr;
    uint32_t layout = 0;
    size_t bytes = 0;
};

// A weight matrix as stored in the GGUF file: nRows rows of nCols elements of type `type`,
// and optionally its repacked copy.
struct WeightView {
    DType type = DType::F32;
    const void* data = nullptr;
    int64_t nRows = 0;
    int64_t nCols = 0;
    PackedRows packed = {};
};

// Memory a backend allocated for a weight's packed copy; the model holds it as long as its views.
class WeightBuffer {
public:
    virtual ~WeightBuffer() = default;
};

// Memory a backend computes in (Backend::allocate): size() bytes at data(), which only that
// backend's operators and transfers read. Freeing does not need the backend: a buffer may
// outlive the backend that made it.
class BackendBuffer {
public:
    virtual ~BackendBuffer() = default;
    void* data() const { return data_; }
    size_t size() const { return size_; }
    template <class T>
    T* as() const {
        return static_cast<T*>(data_);
    }

protected:
    BackendBuffer(void* data, size_t size) : data_(data), size_(size) {}

private:
    void* data_;
    size_t size_;
};

// bytes of host memory aligned to 64 bytes, as a BackendBuffer (what Backend::allocate gives by
// default), or nullptr when there is none.
std::unique_ptr<BackendBuffer> allocateHostBuffer(size_t bytes);

enum class RopeStyle {
    Pairwise,  // rotate (x[2i], x[2i+1]): Llama ("normal" RoPE in GGUF files)
    HalfSplit,  // rotate (x[i], x[i + nRot/2]): NeoX style, Gemma
};

// How Backend::matmulFused makes a product's input, x ([nTokens, nCols] floats), from its
// operands: as it is, rmsNorm(x, normWeight, eps), swiglu(x, up) or geglu(x, up).
struct MatmulInput {
    enum class Kind { Plain, RmsNorm, SwiGlu, GeGlu };
    Kind kind = Kind::Plain;
    const float* x = nullptr;
    const float* normWeight = nullptr;  // RmsNorm: [nCols]
    float eps = 0.0f;  // RmsNorm
    const float* up = nullptr;  // SwiGlu, GeGlu: [nTokens, nCols]
    float* prepared = nullptr;  // every kind but Plain: where the input is written
};

// Backend::qkRope's operands: each head of q ([nTokens, nHeads * headDim]) and of k ([nTokens,
// nKvHeads * headDim]), in place, normalised over headDim with qNorm / kNorm where given
// (RMSNorm, eps), rotated as rope() rotates it, then its first nRot values times attnFactor
// where that is not 1.
struct QkRope {
    float* q = nullptr;
    float* k = nullptr;
    int nHeads = 0, nKvHeads = 0, headDim = 0, nRot = 0;
    const float* qNorm = nullptr;
    const float* kNorm = nullptr;
    float eps = 0.0f;
    float freqBase = 10000.0f;
    RopeStyle style = RopeStyle::Pairwise;
    const float* freqFactors = nullptr;
    float attnFactor = 1.0f;
};

// One layer of one sequence's paged KV cache. Token at position p lives in block
// blocks[p / blockSize], slot p % blockSize. F16: K row = kBlocks[block] + slot * rowStride,
// or with kDimMajor element c (0 <= c < rowStride) of the K row at kBlocks[block] + c * blockSize
// + slot (each head's K dimension by dimension, the block's positions side by side, so attention
// loads eight positions' dimension c at once; blockSize a multiple of 8); V rows token-major, or
// with vHeadDim head by head (below). Q8_0 (never kDimMajor): the block's memory holds rows of rowStride / 32
// BlockQ8_0 (GGUF's Q8_0), the row at byte offset slot * kvRowBytes(layer); a head's slice
// starts on a block (headDim % 32 == 0).
struct PagedKvLayer {
    f16_t* const* kBlocks =
        nullptr;  // [nBlocks] -> block's K [blockSize, rowStride] (kDimMajor: [rowStride, blockSize])
    f16_t* const* vBlocks = nullptr;  // [nBlocks] -> block's V rows [blockSize, rowStride]
    int blockSize = 16;
    int rowStride = 0;  // nKvHeads * headDim
    DType type = DType::F16;  // F16 or Q8_0
    bool kDimMajor = false;  // F16 only: K stored dimension-major within each block (above)
    // F16 only: 0, V rows token-major (above); or the head dimension, the block's V stored head
    // by head, element c of the V row at vBlocks[block] + ((c / vHeadDim) * blockSize + slot) *
    // vHeadDim + c % vHeadDim (one head's rows of the block side by side, as attention reads them;
    // attention needs vHeadDim == AttentionShape::headDim).
    int vHeadDim = 0;
    // Entries of kBlocks and vBlocks (0: not given). A backend whose operators take positions in
    // its own memory cannot read them on the host to find the blocks a call touches: it bounds
    // its block tables by this instead.
    int nBlocks = 0;
    // For a backend that does not operate on host memory (Backend::operatesOnHostMemory): the
    // same tables in its memory, kBlocks' nBlocks entries then vBlocks', uploaded with the step's
    // inputs (ForwardBatch::upload), so that its operators need no transfer of their own. Null:
    // the backend reads kBlocks and vBlocks (host arrays) and moves them itself.
    f16_t* const* tablesOnBackend = nullptr;
};
// Element c of position p's V row in an F16 layer, in either V order.
inline f16_t* kvVElement(const PagedKvLayer& layer, int p, int c) {
    f16_t* block = layer.vBlocks[p / layer.blockSize];
    const int slot = p % layer.blockSize;
    if (layer.vHeadDim == 0) return block + static_cast<int64_t>(slot) * layer.rowStride + c;
    const int head = c / layer.vHeadDim;
    return block + (static_cast<int64_t>(head) * layer.blockSize + slot) * layer.vHeadDim + c % layer.vHeadDim;
}
// Element c of position p's K row in an F16 layer, in either K order.
inline f16_t* kvKElement(const PagedKvLayer& layer, int p, int c) {
    f16_t* block = layer.kBlocks[p / layer.blockSize];
    const int slot = p % layer.blockSize;
    return layer.kDimMajor ? block + static_cast<int64_t>(c) * layer.blockSize + slot
                           : block + static_cast<int64_t>(slot) * layer.rowStride + c;
}
// Bytes of one token's K (or V) row in a layer.
inline size_t kvRowBytes(const PagedKvLayer& layer) { return rowBytes(layer.type, layer.rowStride); }

struct AttentionShape {
    int nHeads = 0;
    int nKvHeads = 0;
    int headDim = 0;
    float scale = 1.0f;  // applied to q.k
    int32_t slidingWindow = 0;  // > 0: a query at position p sees only positions > p - slidingWindow
    float softcap = 0.0f;  // > 0: each score s (after scale) becomes softcap * tanhf(s / softcap) (Gemma 2)
};
// The soft-capped score as every CPU backend computes it (one function, compiled once without
// ISA flags, so the paths agree bitwise): cap * tanhf(s / cap), or s when cap is 0.
float softcapScore(float s, float cap);
// log(sum(exp(x[i]))) over n > 0 finite values: the largest m plus log(sum(exp(x[i] - m))), the
// exponentials and their sum in double — the log-softmax's normaliser as the engine computes it
// on host rows and Backend::topKRows' default gives it.
float logSumExp(const float* x, int64_t n);

// What a backend has moved between the host and its own memory, and run, since it was made:
// transfers (calls and bytes), kernel launches and waits for the device. Zero where a backend
// does not count (the CPU backends, whose memory is the host's).
struct BackendCounters {
    uint64_t uploads = 0, downloads = 0, copies = 0;
    uint64_t bytesUp = 0, bytesDown = 0, bytesCopied = 0;
    uint64_t launches = 0;  // kernels (a cuBLAS call counts as one)
    uint64_t waits = 0;  // times the host waited for the device (each download is one)
};

class Backend {
public:
    Backend();
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // A number no other backend object of this process has, for callers that keep state per
    // backend (a model's buffers in its memory): an address may be reused, this is not.
    uint64_t id() const { return id_; }

    // Where the operators' pointers lie. True (every CPU backend, and the CUDA plugin that copies
    // each call's operands): host memory, so callers may pass any host pointer, and the file's
    // weights and vectors are read where they are. False: every pointer an operator gets —
    // activations, step inputs (token ids, positions), norm vectors, logits — is in memory from
    // allocate(), a matrix is read from its packWeight copy, and data moves between the host and
    // that memory only through upload() and download() (tests/support/device_memory_backend.h
    // checks this and counts the transfers).
    virtual bool operatesOnHostMemory() const { return true; }
    // Rows one forward pass computes at most (llama.cpp's n_ubatch): a longer batch runs as
    // consecutive passes, so that activation memory stays bounded whatever the prompt. A backend
    // that converts every weight again each pass (CUDA's F16 tiles for cuBLAS) asks for more.
    static constexpr int64_t kRowsPerPass = 128;
    virtual int64_t rowsPerPass() const { return kRowsPerPass; }
    // bytes of the backend's memory (aligned to 64 bytes), or nullptr when it has none left.
    // The default: host memory.
    virtual std::unique_ptr<BackendBuffer> allocate(size_t bytes);
    // Copies between the host and the backend's memory (and between two places in the latter:
    // copy). The defaults: memcpy.
    virtual void upload(void* dst, const void* hostSrc, size_t bytes);
    virtual void download(void* hostDst, const void* src, size_t bytes);
    virtual void copy(void* dst, const void* src, size_t bytes);
    // The counts so far (BackendCounters); zeros by default.
    virtual BackendCounters counters() const { return {}; }
    // Bytes of its own memory the backend could still allocate, for placing a model; 0 for a
    // backend over host memory (the default).
    virtual size_t freeMemory() const { return 0; }

    // A step's operators as one submission (a CUDA graph). The caller brackets a step's
    // operator calls with beginStep(key, nRows) and endStep(), with no transfer in between. key
    // names everything those calls depend on besides the contents of the backend's memory: the
    // calls in order, their sizes, scalars and pointers (two steps with equal keys make the same
    // calls on the same memory); nRows is the step's rows. The answer says what happens:
    // Run — each call runs as it comes (the default); Record — the calls may be held and run by
    // endStep, and kept under key; Replay — the caller makes no call, endStep runs the ones kept
    // under key on the memory's current contents (the step's new inputs, uploaded before).
    enum class StepMode { Run, Record, Replay };
    virtual StepMode beginStep(std::string_view key, int64_t nRows) {
        (void)key, (void)nRows;
        return StepMode::Run;
    }
    virtual void endStep() {}
    // Whether this backend's attention is fastest over F16 K stored dimension-major
    // (PagedKvLayer::kDimMajor); every backend reads both orders correctly or refuses.
    virtual bool prefersDimMajorK() const { return false; }
    // Whether its attention is fastest over F16 V stored head by head (PagedKvLayer::vHeadDim);
    // every backend reads both orders correctly or refuses.
    virtual bool prefersHeadMajorV() const { return false; }

    // y[t][r] = dot(row r of w, x[t]) for t < nTokens. x: [nTokens, w.nCols]; y: [nTokens, w.nRows].
    virtual void matmul(const WeightView& w, const float* x, int64_t nTokens, float* y) = 0;
    // ys[i] = x · ws[i]ᵀ for matrices of the same nCols (Q/K/V, gate/up), each ys[i] bitwise what
    // matmul(ws[i], ...) gives: the backend may quantize x once and hand all the rows to its
    // threads in one go.
    virtual void matmulMany(std::span<const WeightView> ws, const float* x, int64_t nTokens,
                            std::span<float* const> ys) {
        for (size_t i = 0; i < ws.size(); ++i) matmul(ws[i], x, nTokens, ys[i]);
    }
    // matmulMany with the work around it that a backend may fuse into the products: the input
    // prepared from x (MatmulInput) and written to `prepared` ([nTokens, nCols]; it may alias x
    // for the gated activations), and with `accumulate` the products added to ys instead of
    // stored (one matrix; `sums` [nTokens, nRows] is scratch). The default makes the separate
    // calls — rmsNorm or swiglu/geglu, matmulMany or matmul into sums, add — so every result is
    // bitwise theirs; a backend that fuses gives the same bits as its own separate calls.
    virtual void matmulFused(const MatmulInput& in, std::span<const WeightView> ws, int64_t nTokens,
                             std::span<float* const> ys, bool accumulate = false, float* sums = nullptr);
    // Called once per matrix at load, before any matmul: the backend may copy w's rows into a
    // layout of its own (w.packed set, the buffer returned for the caller to keep as long as w)
    // with the same results, bit for bit. Null (the default): w is read as it is in the file.
    // After a packed copy is made, the file's rows of w are not read by this backend (the caller
    // may release their pages), embeddingRows included. A backend that copies a large matrix
    // piece by piece calls released(bytes of w's rows) for each piece it no longer reads, so that
    // the caller can release them while the rest is copied. A backend with memory of its own
    // that has no room left for w throws std::bad_alloc (the engine then places fewer layers).
    virtual std::unique_ptr<WeightBuffer> packWeight(
        WeightView& w, const std::function<void(std::span<const uint8_t> rows)>& released = {}) {
        (void)w, (void)released;
        return nullptr;
    }
    // out[i] = row ids[i] of the table, dequantized. out: [n, table.nCols].
    virtual void embeddingRows(const WeightView& table, const int32_t* ids, int64_t n, float* out) = 0;
    // y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w for each of nRows rows of n. y may alias x.
    virtual void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y) = 0;
    // Rotates the first nRot dims of each head in place. x: [nTokens, nHeads * headDim].
    // freqFactors: nullptr, or [nRot / 2] divisors of each pair's angle (rope_freqs.weight).
    virtual void rope(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions,
                      float freqBase, RopeStyle style, const float* freqFactors) = 0;
    // Stores k, v rows ([nTokens, rowStride] floats) at positions into the paged layer.
    virtual void kvWrite(const PagedKvLayer& layer, const float* k, const float* v, const int32_t* positions,
                         int64_t nTokens) = 0;
    // One sequence's kvWrite in a kvWriteMany call: kvWrite()'s arguments.
    struct KvWriteCall {
        const PagedKvLayer* layer = nullptr;
        const float* k = nullptr;
        const float* v = nullptr;
        const int32_t* positions = nullptr;
        int64_t nTokens = 0;
    };
    // kvWrite() of each call (the sequences of one step, each into its own blocks); the backend
    // may write them all in one go.
    virtual void kvWriteMany(std::span<const KvWriteCall> calls) {
        for (const KvWriteCall& c : calls) kvWrite(*c.layer, c.k, c.v, c.positions, c.nTokens);
    }
    // Causal attention: token t (query row t of q [nTokens, nHeads*headDim]) attends to cache
    // positions [0, positions[t]] (with a sliding window: (positions[t] - window, positions[t]]). out: [nTokens, nHeads*headDim]. Each token is reduced over
    // the cache in the same order whatever the batch (batch invariance).
    virtual void attention(const PagedKvLayer& layer, const AttentionShape& shape, const float* q,
                           const int32_t* positions, int64_t nTokens, float* out) = 0;
    // One sequence's attention in an attentionMany call: attention()'s arguments.
    struct AttentionCall {
        const PagedKvLayer* layer = nullptr;
        const float* q = nullptr;
        const int32_t* positions = nullptr;
        int64_t nTokens = 0;
        float* out = nullptr;
    };
    // attention() of each call (the sequences of one step, their K/V already written), with the
    // same results; the backend may share the calls' work out to its threads in one go.
    virtual void attentionMany(std::span<const AttentionCall> calls, const AttentionShape& shape) {
        for (const AttentionCall& c : calls) attention(*c.layer, shape, c.q, c.positions, c.nTokens, c.out);
    }
    // out[i] = silu(gate[i]) * up[i] (SwiGLU), or gelu_tanh(gate[i]) * up[i] (GeGLU).
    virtual void swiglu(const float* gate, const float* up, int64_t n, float* out) = 0;
    virtual void geglu(const float* gate, const float* up, int64_t n, float* out) = 0;
    // x[i] += y[i]
    virtual void add(float* x, const float* y, int64_t n) = 0;
    // x += rmsNorm(y, w) for nRows rows of n (a post-norm before the residual add); y is
    // normalised in place. The default makes the two calls; a backend that fuses them gives the
    // same bits as its own separate calls.
    virtual void addRmsNormed(float* x, float* y, const float* w, int64_t nRows, int64_t n, float eps) {
        rmsNorm(y, w, nRows, n, eps, y);
        add(x, y, nRows * n);
    }
    // The query and key rows made ready for attention (QkRope). The default makes the separate
    // calls — rmsNorm of each head, rope, scale — so a backend that fuses them gives the same bits
    // as its own separate calls.
    virtual void qkRope(const QkRope& r, const int32_t* positions, int64_t nTokens);
    // qkRope, then kvWriteMany(writes), whose K rows are the rows of r.k (positions: the
    // rotation's; each write has its own, the cache slots). The default makes the two calls; a
    // backend that writes each K head right after rotating it (one pass over K) gives the same
    // bits as its own separate calls.
    virtual void qkRopeKvWrite(const QkRope& r, const int32_t* positions, int64_t nTokens,
                               std::span<const KvWriteCall> writes) {
        qkRope(r, positions, nTokens);
        kvWriteMany(writes);
    }
    // out[r] = the index of row r's largest value (n values a row): the first of equal ones,
    // NaNs passed over, 0 when the row starts with a NaN — the sampler's greedy argmax, so that
    // a greedy step brings down one id a row instead of the row. The default runs on host memory.
    virtual void argmaxRows(const float* x, int64_t nRows, int64_t n, int32_t* out);
    // A value of a row and its column (topKRows).
    struct TopEntry {
        int32_t id;
        float value;
    };
    static constexpr int32_t kMaxTopK = 256;
    // The k first of a row's n values with their columns, in the sampler's order (greater first;
    // equal values, -0 == +0, by lower column), 0 <= k <= n: topKRows' default for one row, and the
    // engine's top logits of a row on the host. scratch: storage reused between calls.
    static void firstValues(const float* x, int64_t n, int32_t k, std::vector<TopEntry>& scratch, TopEntry* out);
    // out[r * k + j], j < k: row r's k first values with their columns in the sampler's order
    // (greater value first; equal values, -0 == +0, by lower column), so that a sampled step brings
    // down k candidates a row instead of the row. A row holding a NaN or an infinity gets
    // out[r * k].id = -1 instead (the rest unspecified): whoever asked needs the row itself.
    // With lse, lse[r] = the row's log-sum-exp besides (logSumExp; a backend may sum in another
    // order, within a few units in the last place of the float; unspecified for a flagged row), so
    // that log-probabilities of those candidates come down too. 0 < k <= min(n, kMaxTopK). The
    // default runs on host memory.
    virtual void topKRows(const float* x, int64_t nRows, int64_t n, int32_t k, TopEntry* out, float* lse = nullptr);
    // x[r * rowStride + i] *= s for r < nRows, i < n (scaled embeddings, RoPE's attention
    // factor). The default runs on host memory.
    virtual void scale(float* x, int64_t nRows, int64_t rowStride, int64_t n, float s);
    // x[i] = softcapScore(x[i], cap) (Gemma 2's final soft-cap). The default runs on host memory.
    virtual void softcap(float* x, int64_t n, float cap);

private:
    uint64_t id_;
};

// Memory of one backend that grows to the largest size asked of it, and is made anew when asked
// on another backend (Backend::id): per-step buffers a caller keeps between steps.
class BackendScratch {
public:
    // At least bytes of b's memory (its earlier contents kept only when it was not remade), or
    // nullptr when b has no more.
    void* reserve(Backend& b, size_t bytes);

private:
    uint64_t owner_ = 0;
    std::unique_ptr<BackendBuffer> buffer_;
};

struct BackendInfo {
    std::string name;  // "CPU (reference)", "CPU (AVX2)", "CUDA"
    bool available = false;
    std::string reason;  // why not available; empty when available
    BackendProblem problem = BackendProblem::None;  // the same, as a value
};

// Every backend Hearth knows, available or not, in order of preference.
std::vector<BackendInfo> listBackends();
// The CPU reference backend (always available).
std::unique_ptr<Backend> makeCpuReferenceBackend();
// The fastest CPU backend this machine runs at the level cpuLevelChoice() picks
// (kernels/cpu/cpu_features.h; HEARTH_CPU caps it, HEARTH_CPU=reference forces the reference):
// AVX2 when the CPU and OS support it, else the reference. nThreads <= 0: one thread per
// physical core; HEARTH_THREADS=N sets the threads when nThreads <= 0.
std::unique_ptr<Backend> makeBestCpuBackend(int nThreads = 0);
// Empty when makeBestCpuBackend() runs the AVX2 backend; otherwise one short line for people on
// why it runs the slow reference kernels ("this CPU lacks AVX2 ...", "HEARTH_CPU=reference").
std::string cpuFallbackNote();
// HEARTH_BACKEND=cuda in the environment: the engine asks for the CUDA plugin.
bool cudaRequestedByEnvironment();
// HEARTH_BACKEND=cpu in the environment: the engine stays on the CPU even where a GPU is usable.
bool cpuRequestedByEnvironment();

}  // namespace hearth
