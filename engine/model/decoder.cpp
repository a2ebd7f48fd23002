// The shared decoder (decoder.h): tensor binding with optional and fused tensors, and the one
// forward pass every architecture runs. One pass runs a batch of sequences (ForwardBatch):
// their rows go together through every op but attention. Buffers are commented with their
// shapes, llama2.c style. The order of operations is llama.cpp's for each family, which is what
// GGUF files are converted and tested for.
#include "engine/model/decoder.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cmath>
#include <functional>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/forward_batch.h"
#include "engine/model/gguf.h"
#include "engine/model/hparams.h"
#include "engine/str_cat.h"

namespace hearth {
namespace {

struct DecoderLayer {
    const float* attnNorm = nullptr;  // [nEmbd]
    WeightView wq, wk, wv, wo;  // [qDim, nEmbd], [kvDim, nEmbd] x2, [nEmbd, qDim]
    const float* bq = nullptr;  // [qDim] or nullptr
    const float* bk = nullptr;  // [kvDim] or nullptr
    const float* bv = nullptr;  // [kvDim] or nullptr
    const float* qNorm = nullptr;  // [headDim], shared by every query head, or nullptr
    const float* kNorm = nullptr;  // [headDim], shared by every KV head, or nullptr
    const float* postAttnNorm = nullptr;  // [nEmbd] or nullptr
    const float* ffnNorm = nullptr;  // [nEmbd]
    WeightView wGate, wUp, wDown;  // [nFf, nEmbd] x2, [nEmbd, nFf]
    const float* postFfwNorm = nullptr;  // [nEmbd] or nullptr
    float ropeBase = 0.0f;  // the layer's RoPE base (local layers: ropeFreqBaseSwa)
    int32_t window = 0;  // > 0: a local layer's sliding window
};

// A layer's vectors where a backend reads them (DecoderLayer's own, or copies in the backend's
// memory: Placement).
struct LayerVectors {
    const float *attnNorm, *bq, *bk, *bv, *qNorm, *kNorm, *postAttnNorm, *ffnNorm, *postFfwNorm;
};

// The model's state on the backend it last ran on (Backend::id): the vectors where that backend
// reads them and the activations in its memory. Remade when forwardBatch gets another backend.
struct Placement {
    uint64_t backend = 0;
    uint64_t made = 0;  // how many times the vectors were placed: part of a step's key (their addresses)
    std::vector<std::unique_ptr<BackendBuffer>> copies;  // vectors copied into a backend's own memory
    std::vector<LayerVectors> layers;
    const float* outputNorm = nullptr;
    const float* freqFactors = nullptr;  // [nRot / 2] or nullptr
    BackendScratch activations;
};

// Rows [first, first + n) of a weight, as a weight of its own: rows are contiguous.
WeightView rowRange(const WeightView& w, int64_t first, int64_t n) {
    WeightView part = w;
    part.data = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(first) * rowBytes(w.type, w.nCols);
    part.nRows = n;
    return part;
}

// Binds one layer's tensors by name; a missing required tensor or a wrong shape is an error
// naming the tensor.
class LayerBinder {
public:
    LayerBinder(const GgufFile& file, int layer) : file_(file), prefix_(strCat("blk.", layer, ".")) {}

    bool has(const char* name) const { return file_.findTensor(prefix_ + name) != nullptr; }
    Result<void> vector(const char* name, int64_t n, const float*& dst) const {
        auto r = bindNorm(file_, prefix_ + name, n);
        if (!r) return std::unexpected(r.error());
        dst = *r;
        return {};
    }
    Result<void> optionalVector(const char* name, int64_t n, const float*& dst) const {
        return has(name) ? vector(name, n, dst) : Result<void>{};
    }
    Result<void> matrix(const char* name, int64_t cols, int64_t rows, WeightView& dst) const {
        auto r = bindWeight(file_, prefix_ + name, cols, rows);
        if (!r) return std::unexpected(r.error());
        dst = *r;
        return {};
    }

private:
    const GgufFile& file_;
    std::string prefix_;
};

class DecoderModel final : public Model {
public:
    explicit DecoderModel(const DecoderOptions& options) : options_(options) {}
    Result<void> bind(const GgufFile& file, ModelConfig config);
    Result<void> forwardBatch(Backend& backend, KvCache& cache, std::span<const ForwardItem> items) override;
    Result<void> runBatch(Backend& backend, KvCache& cache, std::span<const ForwardItem> items);
    size_t packWeights(Backend& backend, const std::function<void(int done, int total)>& progress) override;
    std::vector<PackableWeight> packableWeights() override;
    bool logitsOnHost(const Backend& b) const override { return b.operatesOnHostMemory() || host_ != nullptr; }
    void splitLayers(Backend* host, int firstHostLayer) override {
        host_ = firstHostLayer < config_.nLayers ? host : nullptr;
        firstHostLayer_ = host_ != nullptr ? std::max(0, firstHostLayer) : config_.nLayers;
    }

private:
    Result<void> bindLayer(const GgufFile& file, int il);
    Result<void> place(Backend& b, Placement& placed);
    // The activations' arrays in one buffer of b's memory (placed.activations).
    struct Activations {
        float *x, *xn, *q, *k, *v, *att, *proj, *gate, *up;
    };
    Result<Activations> reserveActivations(Backend& b, Placement& placed, int64_t nTokens);
    void use(const Activations& a) {
        x_ = a.x, xn_ = a.xn, q_ = a.q, k_ = a.k, v_ = a.v, att_ = a.att, proj_ = a.proj, gate_ = a.gate, up_ = a.up;
    }
    void attentionBlock(Backend& b, KvCache& cache, int layer, int64_t nTokens);
    void feedForwardBlock(Backend& b, int layer, int64_t nTokens);
    MatmulInput normed(const float* w) const;
    void residualProjection(Backend& b, const MatmulInput& in, const WeightView& w, const float* postNorm,
                            int64_t nTokens);
    static void addBias(Backend& b, float* rows, const float* bias, int64_t nTokens, int64_t dim);

    DecoderOptions options_;
    const GgufFile* file_ = nullptr;
    OutputHead head_;
    std::vector<std::unique_ptr<WeightBuffer>> packedBuffers_;  // the backend's copies (packWeights)
    std::vector<DecoderLayer> layers_;

    // The batch's rows (nTokens of them, all items together) and their positions.
    ForwardBatch batch_;
    Placement placed_;
    // splitLayers: the CPU backend of layers [firstHostLayer_, nLayers) and the output head, and
    // its placement (the file's vectors, host activations). vectors_: the placement the layer
    // being computed reads its vectors from.
    Backend* host_ = nullptr;
    int firstHostLayer_ = 0;
    Placement placedHost_;
    const Placement* vectors_ = &placed_;
    // A number no other model of this process has (a freed model's addresses may be reused by
    // the next one): part of every step key (Backend::beginStep).
    const uint64_t instance_ = nextInstance();
    static uint64_t nextInstance() {
        static std::atomic<uint64_t> counter{1};
        return counter.fetch_add(1);
    }
    // Activations in the backend's memory (placed_.activations), set per call:
    // x/xn/proj [nTokens, nEmbd]; q/att [nTokens, qDim]; k/v [nTokens, kvDim]; gate/up [nTokens, nFf].
    float *x_ = nullptr, *xn_ = nullptr, *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *att_ = nullptr,
          *proj_ = nullptr, *gate_ = nullptr, *up_ = nullptr;
};

// The options and configuration in words (ModelConfig::features).
std::string describe(const ModelConfig& c, const DecoderOptions& o, bool fusedQkv, bool biases) {
    std::vector<std::string> parts;
    if (biases) parts.emplace_back("Q/K/V biases");
    if (fusedQkv) parts.emplace_back("fused QKV");
    if (o.fusedGateUp) parts.emplace_back("fused gate/up");
    if (o.qkNorm) parts.emplace_back("QK norm");
    if (o.postNorms) parts.emplace_back("post norms");
    if (o.scaleEmbeddings) parts.emplace_back("scaled embeddings");
    parts.emplace_back(o.activation == FfnActivation::Gelu ? "GeGLU" : "SwiGLU");
    parts.emplace_back(c.ropeStyle == RopeStyle::HalfSplit ? "NeoX RoPE" : "RoPE on pairs");
    if (c.nRot < c.headDim) parts.push_back(strCat("RoPE on ", c.nRot, " of ", c.headDim, " dims"));
    if (!c.ropeFreqFactors.empty()) parts.emplace_back("RoPE frequency factors");
    if (o.ropeAttnFactor != 1.0f) parts.push_back(strCat("RoPE attn factor ", o.ropeAttnFactor));
    if (!c.slidingLayers.empty()) {
        const auto nLocal = std::count(c.slidingLayers.begin(), c.slidingLayers.end(), true);
        parts.push_back(strCat("sliding window ", c.slidingWindow, " on ", nLocal, " of ", c.nLayers, " layers"));
    }
    if (o.attentionSoftcap > 0) parts.push_back(strCat("attention soft-cap ", o.attentionSoftcap));
    if (o.finalSoftcap > 0) parts.push_back(strCat("final soft-cap ", o.finalSoftcap));
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
    return out;
}

Result<void> DecoderModel::bind(const GgufFile& file, ModelConfig config) {
    file_ = &file;
    config_ = std::move(config);
    if (options_.attentionScale == 0.0f)
        options_.attentionScale = 1.0f / std::sqrt(static_cast<float>(config_.headDim));
    auto head = bindOutputHead(file, config_);
    if (!head) return std::unexpected(head.error());
    head_ = *head;
    config_.tiedOutput = head_.tied;
    layers_.resize(static_cast<size_t>(config_.nLayers));
    for (int il = 0; il < config_.nLayers; ++il)
        if (auto r = bindLayer(file, il); !r) return r;
    config_.features =
        describe(config_, options_, file.findTensor("blk.0.attn_qkv.weight") != nullptr, layers_.front().bq != nullptr);
    return {};
}

Result<void> DecoderModel::bindLayer(const GgufFile& file, int il) {
    const ModelConfig& c = config_;
    const int64_t qDim = int64_t{c.nHeads} * c.headDim, kvDim = int64_t{c.nKvHeads} * c.headDim;
    DecoderLayer& L = layers_[static_cast<size_t>(il)];
    const LayerBinder t(file, il);
    const auto all = [](std::initializer_list<Result<void>> results) -> Result<void> {
        for (const Result<void>& r : results)
            if (!r) return r;
        return {};
    };
    if (auto r =
            all({t.vector("attn_norm.weight", c.nEmbd, L.attnNorm), t.vector("ffn_norm.weight", c.nEmbd, L.ffnNorm)});
        !r)
        return r;
    if (t.has("attn_qkv.weight")) {
        WeightView qkv;
        if (auto r = t.matrix("attn_qkv.weight", c.nEmbd, qDim + 2 * kvDim, qkv); !r) return r;
        L.wq = rowRange(qkv, 0, qDim);
        L.wk = rowRange(qkv, qDim, kvDim);
        L.wv = rowRange(qkv, qDim + kvDim, kvDim);
    } else if (auto r =
                   all({t.matrix("attn_q.weight", c.nEmbd, qDim, L.wq), t.matrix("attn_k.weight", c.nEmbd, kvDim, L.wk),
                        t.matrix("attn_v.weight", c.nEmbd, kvDim, L.wv)});
               !r) {
        return r;
    }
    if (auto r = t.matrix("attn_output.weight", qDim, c.nEmbd, L.wo); !r) return r;
    if (options_.fusedGateUp) {
        WeightView gateUp;
        if (auto r = t.matrix("ffn_up.weight", c.nEmbd, 2 * int64_t{c.nFf}, gateUp); !r) return r;
        L.wGate = rowRange(gateUp, 0, c.nFf);
        L.wUp = rowRange(gateUp, c.nFf, c.nFf);
    } else if (auto r = all({t.matrix("ffn_gate.weight", c.nEmbd, c.nFf, L.wGate),
                             t.matrix("ffn_up.weight", c.nEmbd, c.nFf, L.wUp)});
               !r) {
        return r;
    }
    if (auto r = t.matrix("ffn_down.weight", c.nFf, c.nEmbd, L.wDown); !r) return r;
    if (options_.qkvBiases)
        if (auto r = all({t.optionalVector("attn_q.bias", qDim, L.bq), t.optionalVector("attn_k.bias", kvDim, L.bk),
                          t.optionalVector("attn_v.bias", kvDim, L.bv)});
            !r)
            return r;
    if (options_.qkNorm)
        if (auto r = all({t.vector("attn_q_norm.weight", c.headDim, L.qNorm),
                          t.vector("attn_k_norm.weight", c.headDim, L.kNorm)});
            !r)
            return r;
    if (options_.postNorms)
        if (auto r = all({t.vector("post_attention_norm.weight", c.nEmbd, L.postAttnNorm),
                          t.vector("post_ffw_norm.weight", c.nEmbd, L.postFfwNorm)});
            !r)
            return r;
    const bool local = !c.slidingLayers.empty() && c.slidingLayers[static_cast<size_t>(il)];
    L.ropeBase = local ? c.ropeFreqBaseSwa : c.ropeFreqBase;
    L.window = local ? c.slidingWindow : 0;
    return {};
}

// Matrix by matrix, in file order: the backend's copy is made, every view of the same rows
// (a tied output matrix is the token embedding) takes it, and the file's pages of those rows
// are released, so that memory holds one copy of each weight while loading and after.
// With split layers (splitLayers) each backend gets only the matrices it multiplies: the host
// its layers and the output matrix, the device its layers and its own copy of the token
// embedding (a tied table is then held twice: on the device for the embedding, on the host as
// the output matrix).
size_t DecoderModel::packWeights(Backend& backend, const std::function<void(int done, int total)>& progress) {
    const std::vector<PackableWeight> views = packableWeights();
    size_t packedBytes = 0;
    const int total = static_cast<int>(views.size());
    const bool split = host_ != nullptr;
    const bool hostRole = split && backend.id() == host_->id();
    // The layer a view belongs to (the output matrix: nLayers, the host's), from its name.
    const auto layerOf = [&](const std::string& name) {
        if (name.rfind("blk.", 0) != 0) return config_.nLayers;
        return std::atoi(name.c_str() + 4);
    };
    for (int i = 0; i < total; ++i) {
        WeightView& w = *views[static_cast<size_t>(i)].view;
        const bool mine = !split || (layerOf(views[static_cast<size_t>(i)].name) >= firstHostLayer_) == hostRole;
        if (mine && w.packed.layout == 0)
            if (std::unique_ptr<WeightBuffer> buffer =
                    backend.packWeight(w, [&](std::span<const uint8_t> rows) { file_->releasePages(rows); })) {
                const size_t bytes = rowBytes(w.type, w.nCols) * static_cast<size_t>(w.nRows);
                packedBuffers_.push_back(std::move(buffer));
                packedBytes += bytes;
                file_->releasePages({static_cast<const uint8_t*>(w.data), bytes});
            }
        if (progress) progress(i + 1, total);
    }
    // A tied output matrix is the token embedding: its rows are read back from the one copy. An
    // untied embedding is read a few rows per step and stays as it is in the file, unless the
    // backend computes in memory of its own, which needs every matrix there.
    if (head_.tied && !split) head_.tokenEmbd.packed = head_.output.packed;
    else if (!hostRole && !backend.operatesOnHostMemory() && head_.tokenEmbd.packed.layout == 0)
        if (std::unique_ptr<WeightBuffer> buffer = backend.packWeight(head_.tokenEmbd))
            packedBuffers_.push_back(std::move(buffer));
    // The vectors too, now rather than in the first step (a failure is reported by that step).
    (void)place(backend, backend.id() == (host_ != nullptr ? host_->id() : 0) ? placedHost_ : placed_);
    return packedBytes;
}

// The output matrix, then each layer's in the order the forward pass reads them; names by role
// (a fused QKV tensor's three row ranges are attn_q, attn_k and attn_v).
std::vector<Model::PackableWeight> DecoderModel::packableWeights() {
    std::vector<PackableWeight> views{{"output", &head_.output}};
    for (size_t il = 0; il < layers_.size(); ++il) {
        DecoderLayer& L = layers_[il];
        const std::string prefix = strCat("blk.", il, ".");
        const std::pair<const char*, WeightView*> roles[] = {
            {"attn_q", &L.wq},      {"attn_k", &L.wk},  {"attn_v", &L.wv},     {"attn_output", &L.wo},
            {"ffn_gate", &L.wGate}, {"ffn_up", &L.wUp}, {"ffn_down", &L.wDown}};
        for (const auto& [name, w] : roles) views.push_back({prefix + name, w});
    }
    return views;
}

void DecoderModel::attentionBlock(Backend& b, KvCache& cache, int il, int64_t nTokens) {
    const ModelConfig& c = config_;
    const DecoderLayer& L = layers_[static_cast<size_t>(il)];
    const LayerVectors& V = vectors_->layers[static_cast<size_t>(il)];
    const int64_t qDim = int64_t{c.nHeads} * c.headDim, kvDim = int64_t{c.nKvHeads} * c.headDim;
    const WeightView qkv[] = {L.wq, L.wk, L.wv};
    float* const qkvOut[] = {q_, k_, v_};
    b.matmulFused(normed(V.attnNorm), qkv, nTokens, qkvOut);
    addBias(b, q_, V.bq, nTokens, qDim);
    addBias(b, k_, V.bk, nTokens, kvDim);
    addBias(b, v_, V.bv, nTokens, kvDim);
    QkRope r;
    r.q = q_, r.k = k_;
    r.nHeads = c.nHeads, r.nKvHeads = c.nKvHeads, r.headDim = c.headDim, r.nRot = c.nRot;
    r.qNorm = V.qNorm, r.kNorm = V.kNorm, r.eps = c.rmsEps;  // each head on its own (V is not)
    r.freqBase = L.ropeBase, r.style = c.ropeStyle, r.freqFactors = vectors_->freqFactors;
    // llama.cpp scales the cosines and sines; the rotated values (the first nRot of each head)
    // times the factor are the same up to rounding.
    r.attnFactor = options_.ropeAttnFactor;
    // llama.cpp masks key p0 for query p1 when p1 - p0 >= window (LLAMA_SWA_TYPE_STANDARD): the
    // query sees (p1 - window, p1], AttentionShape::slidingWindow's meaning. The full cache is
    // kept; the window only masks.
    AttentionShape shape{c.nHeads, c.nKvHeads, c.headDim, options_.attentionScale, L.window};
    shape.softcap = options_.attentionSoftcap;
    batch_.attention(b, cache, il, shape, q_, k_, v_, att_, &r);  // RoPE first (with the K/V writes)
    residualProjection(b, MatmulInput{.x = att_}, L.wo, V.postAttnNorm, nTokens);
}

// x_'s rows normalised with w into xn_, as a product's input.
MatmulInput DecoderModel::normed(const float* w) const {
    return {.kind = MatmulInput::Kind::RmsNorm, .x = x_, .normWeight = w, .eps = config_.rmsEps, .prepared = xn_};
}

// x_ += in · wᵀ, through proj_ (normalised there with postNorm first, where the family has one).
void DecoderModel::residualProjection(Backend& b, const MatmulInput& in, const WeightView& w, const float* postNorm,
                                      int64_t nTokens) {
    float* const out[] = {postNorm != nullptr ? proj_ : x_};
    b.matmulFused(in, std::span(&w, 1), nTokens, out, postNorm == nullptr, proj_);
    if (postNorm != nullptr) b.addRmsNormed(x_, proj_, postNorm, nTokens, config_.nEmbd, config_.rmsEps);
}

// rows[t] += bias for each of nTokens rows of dim floats (after the projection, before RoPE, as
// llama.cpp adds it). Row by row through Backend::add: the same bits on every backend.
void DecoderModel::addBias(Backend& b, float* rows, const float* bias, int64_t nTokens, int64_t dim) {
    if (bias == nullptr) return;
    for (int64_t t = 0; t < nTokens; ++t) b.add(rows + t * dim, bias, dim);
}

void DecoderModel::feedForwardBlock(Backend& b, int il, int64_t nTokens) {
    const DecoderLayer& L = layers_[static_cast<size_t>(il)];
    const LayerVectors& V = vectors_->layers[static_cast<size_t>(il)];
    const WeightView gateUp[] = {L.wGate, L.wUp};
    float* const gateUpOut[] = {gate_, up_};
    b.matmulFused(normed(V.ffnNorm), gateUp, nTokens, gateUpOut);
    const MatmulInput gated{
        .kind = options_.activation == FfnActivation::Gelu ? MatmulInput::Kind::GeGlu : MatmulInput::Kind::SwiGlu,
        .x = gate_,
        .up = up_,
        .prepared = gate_};
    residualProjection(b, gated, L.wDown, V.postFfwNorm, nTokens);
}

// The activations of nTokens rows in b's memory, one buffer cut into the arrays (each start
// 64-byte aligned).
Result<DecoderModel::Activations> DecoderModel::reserveActivations(Backend& b, Placement& placed, int64_t nTokens) {
    const ModelConfig& c = config_;
    const int64_t qDim = int64_t{c.nHeads} * c.headDim, kvDim = int64_t{c.nKvHeads} * c.headDim;
    const auto floats = [&](int64_t n) { return static_cast<size_t>((n * nTokens + 15) / 16 * 16); };
    Activations a{};
    float** arrays[] = {&a.x, &a.xn, &a.proj, &a.q, &a.att, &a.k, &a.v, &a.gate, &a.up};
    const size_t sizes[] = {floats(c.nEmbd), floats(c.nEmbd), floats(c.nEmbd), floats(qDim), floats(qDim),
                            floats(kvDim),   floats(kvDim),   floats(c.nFf),   floats(c.nFf)};
    size_t total = 0;
    for (size_t n : sizes) total += n;
    auto* p = static_cast<float*>(placed.activations.reserve(b, total * sizeof(float)));
    if (p == nullptr) return fail(ErrorCode::OutOfMemory, strCat("no backend memory for ", nTokens, " rows' activations"));
    for (size_t i = 0; i < std::size(arrays); p += sizes[i], ++i) *arrays[i] = p;
    return a;
}

// The vectors where b reads them: the file's own for a backend on host memory, else copies in
// its memory (one allocation per vector, made once per backend).
Result<void> DecoderModel::place(Backend& b, Placement& placed) {
    if (placed.backend == b.id()) return {};
    placed.copies.clear();
    placed.layers.clear();
    placed.backend = 0;
    const bool host = b.operatesOnHostMemory();
    bool failed = false;
    const auto at = [&](const float* v, int64_t n) -> const float* {
        if (host || v == nullptr || failed) return v;
        std::unique_ptr<BackendBuffer> copy = b.allocate(static_cast<size_t>(n) * sizeof(float));
        if (!copy) {
            failed = true;
            return nullptr;
        }
        b.upload(copy->data(), v, static_cast<size_t>(n) * sizeof(float));
        placed.copies.push_back(std::move(copy));
        return placed.copies.back()->as<float>();
    };
    const ModelConfig& c = config_;
    const int64_t qDim = int64_t{c.nHeads} * c.headDim, kvDim = int64_t{c.nKvHeads} * c.headDim;
    for (const DecoderLayer& L : layers_)
        placed.layers.push_back({at(L.attnNorm, c.nEmbd), at(L.bq, qDim), at(L.bk, kvDim), at(L.bv, kvDim),
                                  at(L.qNorm, c.headDim), at(L.kNorm, c.headDim), at(L.postAttnNorm, c.nEmbd),
                                  at(L.ffnNorm, c.nEmbd), at(L.postFfwNorm, c.nEmbd)});
    placed.outputNorm = at(head_.outputNorm, c.nEmbd);
    placed.freqFactors = c.ropeFreqFactors.empty()
        ? nullptr
        : at(c.ropeFreqFactors.data(), static_cast<int64_t>(c.ropeFreqFactors.size()));
    if (failed) {
        placed.copies.clear();
        placed.layers.clear();
        return fail(ErrorCode::OutOfMemory, "no backend memory for the model's norm and bias vectors");
    }
    placed.backend = b.id();
    ++placed.made;
    return {};
}

// A backend that fails (the CUDA plugin throws on a CUDA error) gives an error value, not an
// abort: ErrorCode::Device with its words, or OutOfMemory.
Result<void> DecoderModel::forwardBatch(Backend& b, KvCache& cache, std::span<const ForwardItem> items) {
    try {
        return runBatch(b, cache, items);
    } catch (const std::bad_alloc&) {
        return fail(ErrorCode::OutOfMemory, strCat(b.name(), ": out of memory during a forward pass"));
    } catch (const std::exception& e) {
        return fail(ErrorCode::Device, strCat(b.name(), ": ", e.what()));
    }
}

Result<void> DecoderModel::runBatch(Backend& b, KvCache& cache, std::span<const ForwardItem> items) {
    // Passes as long as every backend running one takes (a split model's host layers too).
    const int64_t perPass = host_ != nullptr ? std::min(b.rowsPerPass(), host_->rowsPerPass()) : b.rowsPerPass();
    if (totalRows(items) > perPass) return forwardInPasses(b, cache, items, perPass);
    if (auto r = batch_.prepare(*this, cache, items); !r) return r;
    const int64_t nTokens = batch_.nRows();
    if (nTokens == 0) return {};
    // Split placement (splitLayers): b runs the embedding and layers [0, split), host the rest
    // and the output head.
    const bool split = host_ != nullptr && !b.operatesOnHostMemory();
    const int firstHost = split ? firstHostLayer_ : config_.nLayers;
    Backend& last = split ? *host_ : b;  // runs the output head
    if (auto r = place(b, placed_); !r) return r;
    if (split)
        if (auto r = place(*host_, placedHost_); !r) return r;
    auto acts = reserveActivations(b, placed_, nTokens);
    if (!acts) return std::unexpected(acts.error());
    Activations hostActs{};
    if (split) {
        auto h = reserveActivations(*host_, placedHost_, nTokens);
        if (!h) return std::unexpected(h.error());
        hostActs = *h;
    }
    use(*acts);
    vectors_ = &placed_;
    if (auto r = batch_.upload(b, cache, firstHost); !r) return r;
    if (auto r = batch_.reserveOutputs(last, head_); !r) return r;
    // From the embeddings to the logits (to the last layer on b when split) only operators: on a
    // backend with memory of its own one submission, recorded once per key and replayed
    // (Backend::beginStep). The key adds this model (its weights and vectors), its activations'
    // address and the split to the batch's.
    std::string key = b.operatesOnHostMemory() ? std::string() : batch_.stepKey();
    Backend::StepMode mode = Backend::StepMode::Run;
    if (!key.empty()) {
        const uint64_t words[] = {instance_, placed_.made, reinterpret_cast<uintptr_t>(x_),
                                  static_cast<uint64_t>(firstHost)};
        key.append(reinterpret_cast<const char*>(words), sizeof words);
        mode = b.beginStep(key, nTokens);
    }
    if (mode != Backend::StepMode::Replay) {
        b.embeddingRows(head_.tokenEmbd, batch_.tokens(), nTokens, x_);
        if (options_.scaleEmbeddings) {
            // In float, as llama.cpp does (sqrtf, not rounded to bf16 as Hugging Face's bf16
            // checkpoints do).
            const int64_t n = nTokens * config_.nEmbd;
            b.scale(x_, 1, n, n, std::sqrt(static_cast<float>(config_.nEmbd)));
        }
        for (int il = 0; il < firstHost; ++il) {
            attentionBlock(b, cache, il, nTokens);
            feedForwardBlock(b, il, nTokens);
        }
        if (!split) batch_.outputRows(b, head_, placed_.outputNorm, config_.rmsEps, x_, options_.finalSoftcap);
    }
    if (!key.empty()) b.endStep();
    if (split) {  // the residual stream comes down once; the host's layers and the head go on from it
        b.download(hostActs.x, acts->x, static_cast<size_t>(nTokens * config_.nEmbd) * sizeof(float));
        use(hostActs);
        vectors_ = &placedHost_;
        for (int il = firstHost; il < config_.nLayers; ++il) {
            attentionBlock(*host_, cache, il, nTokens);
            feedForwardBlock(*host_, il, nTokens);
        }
        batch_.outputRows(*host_, head_, placedHost_.outputNorm, config_.rmsEps, x_, options_.finalSoftcap);
    }
    batch_.downloadLogits(last);
    return {};
}

}  // namespace

Result<std::unique_ptr<Model>> makeDecoder(const GgufFile& file, ModelConfig config, const DecoderOptions& options) {
    // What some files of these families carry and this pass does not compute, refused by name
    // rather than run with wrong logits.
    std::vector<const char*> refused{"blk.0.attn_output.bias", "output.bias", "blk.0.attn_qkv.bias",
                                     "blk.0.ffn_up.bias", "blk.0.ffn_down.bias"};
    if (!options.qkvBiases)
        refused.insert(refused.end(), {"blk.0.attn_q.bias", "blk.0.attn_k.bias", "blk.0.attn_v.bias"});
    for (const char* name : refused)
        if (file.findTensor(name) != nullptr)
            return fail(ErrorCode::Unsupported, strCat(name, " is not supported yet for ", config.architecture));
    auto model = std::make_unique<DecoderModel>(options);
    if (auto r = model->bind(file, std::move(config)); !r) return std::unexpected(r.error());
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace hearth
