// The Llama architecture (TinyLlama, Llama 2/3, Mistral, SmolLM2): pre-norm RMSNorm, RoPE on
// consecutive pairs, grouped-query attention over the paged KV cache, SwiGLU, tied or untied
// output; optional Q/K/V biases. Qwen 2 / 2.5 (general.architecture qwen2) is the same pass with
// its keys under qwen2.*, Q/K/V biases and RoPE on the two halves of each head (NeoX style). One pass runs a batch of sequences (ForwardBatch): their rows go together through
// every op but attention. Buffers are commented with their shapes, llama2.c style.
#include <cmath>
#include <vector>

#include "engine/str_cat.h"
#include "engine/model/arch_registry.h"
#include "engine/model/forward_batch.h"
#include "engine/model/gguf.h"
#include "engine/model/hparams.h"

namespace hearth {
namespace {

struct LlamaLayer {
    const float* attnNorm = nullptr;  // [nEmbd]
    WeightView wq, wk, wv, wo;        // [nHeads*headDim, nEmbd], [kvDim, nEmbd] x2, [nEmbd, nHeads*headDim]
    const float* bq = nullptr;        // [nHeads*headDim], or nullptr (no bias)
    const float* bk = nullptr;        // [kvDim], or nullptr
    const float* bv = nullptr;        // [kvDim], or nullptr
    const float* ffnNorm = nullptr;   // [nEmbd]
    WeightView wGate, wUp, wDown;     // [nFf, nEmbd] x2, [nEmbd, nFf]
};

class LlamaModel final : public Model {
public:
    Result<void> bind(const GgufFile& file, ModelConfig config);
    Result<void> forwardBatch(Backend& backend, KvCache& cache, std::span<const ForwardItem> items) override;

private:
    void attentionBlock(Backend& b, KvCache& cache, int layer, int64_t nTokens);
    void feedForwardBlock(Backend& b, int layer, int64_t nTokens);
    void resizeActivations(int64_t nTokens);
    static void addBias(Backend& b, float* rows, const float* bias, int64_t nTokens, int64_t dim);

    OutputHead head_;
    std::vector<LlamaLayer> layers_;

    // The batch's rows (nTokens of them, all items together) and their positions.
    ForwardBatch batch_;
    // Activations, resized per call: x/xn/proj [nTokens, nEmbd]; q/att [nTokens, nHeads*headDim];
    // k/v [nTokens, kvDim]; gate/up [nTokens, nFf].
    std::vector<float> x_, xn_, q_, k_, v_, att_, proj_, gate_, up_;
};

Result<void> LlamaModel::bind(const GgufFile& file, ModelConfig config) {
    config_ = std::move(config);
    const ModelConfig& c = config_;
    const int64_t qDim = int64_t{c.nHeads} * c.headDim, kvDim = int64_t{c.nKvHeads} * c.headDim;
    auto head = bindOutputHead(file, c);
    if (!head) return std::unexpected(head.error());
    head_ = *head;
    config_.tiedOutput = head_.tied;
    layers_.resize(static_cast<size_t>(c.nLayers));
    for (int il = 0; il < c.nLayers; ++il) {
        LlamaLayer& L = layers_[static_cast<size_t>(il)];
        const std::string p = strCat("blk.", il, ".");
        const auto norm = [&](const char* n, const float*& dst) -> Result<void> {
            auto r = bindNorm(file, p + n, c.nEmbd);
            if (!r) return std::unexpected(r.error());
            dst = *r;
            return {};
        };
        const auto weight = [&](const char* n, int64_t cols, int64_t rows, WeightView& dst) -> Result<void> {
            auto r = bindWeight(file, p + n, cols, rows);
            if (!r) return std::unexpected(r.error());
            dst = *r;
            return {};
        };
        // Optional biases (Qwen 2 has all three): F32 vectors the size of each projection's rows.
        const auto bias = [&](const char* n, int64_t dim, const float*& dst) -> Result<void> {
            if (file.findTensor(p + n) == nullptr) return {};
            auto r = bindNorm(file, p + n, dim);
            if (!r) return std::unexpected(r.error());
            dst = *r;
            return {};
        };
        for (auto r : {bias("attn_q.bias", qDim, L.bq), bias("attn_k.bias", kvDim, L.bk), bias("attn_v.bias", kvDim, L.bv)})
            if (!r) return r;
        for (auto r : {norm("attn_norm.weight", L.attnNorm), norm("ffn_norm.weight", L.ffnNorm),
                       weight("attn_q.weight", c.nEmbd, qDim, L.wq), weight("attn_k.weight", c.nEmbd, kvDim, L.wk),
                       weight("attn_v.weight", c.nEmbd, kvDim, L.wv), weight("attn_output.weight", qDim, c.nEmbd, L.wo),
                       weight("ffn_gate.weight", c.nEmbd, c.nFf, L.wGate), weight("ffn_up.weight", c.nEmbd, c.nFf, L.wUp),
                       weight("ffn_down.weight", c.nFf, c.nEmbd, L.wDown)})
            if (!r) return r;
    }
    return {};
}

void LlamaModel::attentionBlock(Backend& b, KvCache& cache, int il, int64_t nTokens) {
    const ModelConfig& c = config_;
    const LlamaLayer& L = layers_[static_cast<size_t>(il)];
    b.rmsNorm(x_.data(), L.attnNorm, nTokens, c.nEmbd, c.rmsEps, xn_.data());
    b.matmul(L.wq, xn_.data(), nTokens, q_.data());
    b.matmul(L.wk, xn_.data(), nTokens, k_.data());
    b.matmul(L.wv, xn_.data(), nTokens, v_.data());
    const int64_t qDim = int64_t{c.nHeads} * c.headDim, kvDim = int64_t{c.nKvHeads} * c.headDim;
    addBias(b, q_.data(), L.bq, nTokens, qDim);
    addBias(b, k_.data(), L.bk, nTokens, kvDim);
    addBias(b, v_.data(), L.bv, nTokens, kvDim);
    const float* freqFactors = c.ropeFreqFactors.empty() ? nullptr : c.ropeFreqFactors.data();
    b.rope(q_.data(), nTokens, c.nHeads, c.headDim, c.nRot, batch_.positions(), c.ropeFreqBase, c.ropeStyle, freqFactors);
    b.rope(k_.data(), nTokens, c.nKvHeads, c.headDim, c.nRot, batch_.positions(), c.ropeFreqBase, c.ropeStyle, freqFactors);
    const AttentionShape shape{c.nHeads, c.nKvHeads, c.headDim, 1.0f / std::sqrt(static_cast<float>(c.headDim))};
    batch_.attention(b, cache, il, shape, q_.data(), k_.data(), v_.data(), att_.data());
    b.matmul(L.wo, att_.data(), nTokens, proj_.data());
    b.add(x_.data(), proj_.data(), nTokens * c.nEmbd);
}

// rows[t] += bias for each of nTokens rows of dim floats (after the projection, before RoPE, as
// llama.cpp adds it). Row by row through Backend::add: the same bits on every backend.
void LlamaModel::addBias(Backend& b, float* rows, const float* bias, int64_t nTokens, int64_t dim) {
    if (bias == nullptr) return;
    for (int64_t t = 0; t < nTokens; ++t) b.add(rows + t * dim, bias, dim);
}

void LlamaModel::feedForwardBlock(Backend& b, int il, int64_t nTokens) {
    const ModelConfig& c = config_;
    const LlamaLayer& L = layers_[static_cast<size_t>(il)];
    b.rmsNorm(x_.data(), L.ffnNorm, nTokens, c.nEmbd, c.rmsEps, xn_.data());
    b.matmul(L.wGate, xn_.data(), nTokens, gate_.data());
    b.matmul(L.wUp, xn_.data(), nTokens, up_.data());
    b.swiglu(gate_.data(), up_.data(), nTokens * c.nFf, gate_.data());
    b.matmul(L.wDown, gate_.data(), nTokens, proj_.data());
    b.add(x_.data(), proj_.data(), nTokens * c.nEmbd);
}

void LlamaModel::resizeActivations(int64_t nTokens) {
    const ModelConfig& c = config_;
    const int64_t qDim = int64_t{c.nHeads} * c.headDim, kvDim = int64_t{c.nKvHeads} * c.headDim;
    x_.resize(static_cast<size_t>(nTokens * c.nEmbd));
    xn_.resize(x_.size());
    proj_.resize(x_.size());
    q_.resize(static_cast<size_t>(nTokens * qDim));
    att_.resize(q_.size());
    k_.resize(static_cast<size_t>(nTokens * kvDim));
    v_.resize(k_.size());
    gate_.resize(static_cast<size_t>(nTokens * c.nFf));
    up_.resize(gate_.size());
}

Result<void> LlamaModel::forwardBatch(Backend& b, KvCache& cache, std::span<const ForwardItem> items) {
    if (totalRows(items) > kMaxRowsPerPass) return forwardInPasses(b, cache, items);
    if (auto r = batch_.prepare(*this, cache, items); !r) return r;
    const int64_t nTokens = batch_.nRows();
    if (nTokens == 0) return {};
    resizeActivations(nTokens);
    b.embeddingRows(head_.tokenEmbd, batch_.tokens(), nTokens, x_.data());
    for (int il = 0; il < config_.nLayers; ++il) {
        attentionBlock(b, cache, il, nTokens);
        feedForwardBlock(b, il, nTokens);
    }
    batch_.finish(b, head_, config_.rmsEps, x_.data());
    return {};
}


// What some Llama-family files carry and this forward pass does not compute yet, refused by
// name rather than run with wrong logits: RoPE scaling by a factor (linear, YaRN), biases on the
// attention output or the output head, fused QKV. (Llama 3.1's "llama3" scaling arrives
// precomputed as rope_freqs.weight, which is read; Q/K/V biases are read.)
Result<void> checkLlamaFeatures(const GgufFile& file, const std::string& arch) {
    if (auto r = refuseRopeScaling(file, arch, arch == "llama" ? "llama3" : ""); !r) return r;
    for (const char* name : {"blk.0.attn_output.bias", "output.bias", "blk.0.attn_qkv.weight"})
        if (file.findTensor(name) != nullptr)
            return fail(ErrorCode::Unsupported, strCat(name, " is not supported yet for ", arch));
    return {};
}

// llama and qwen2: the same pass; the keys' prefix and the RoPE style differ, and only llama
// files carry rope_freqs.weight (llama.cpp's qwen2 graph passes no frequency factors).
Result<std::unique_ptr<Model>> loadLlamaFamily(const GgufFile& file, const std::string& arch) {
    if (auto r = checkLlamaFeatures(file, arch); !r) return std::unexpected(r.error());
    auto config = readCommonConfig(file, arch);
    if (!config) return std::unexpected(config.error());
    config->ropeStyle = arch == "qwen2" ? RopeStyle::HalfSplit : RopeStyle::Pairwise;
    // Llama 3.1 and later: the per-pair divisors of the RoPE angles (llama.cpp's freq_factors).
    if (arch == "llama" && file.findTensor("rope_freqs.weight") != nullptr) {
        auto factors = bindNorm(file, "rope_freqs.weight", config->nRot / 2);
        if (!factors) return std::unexpected(factors.error());
        config->ropeFreqFactors.assign(*factors, *factors + config->nRot / 2);
        for (float f : config->ropeFreqFactors)
            if (!std::isfinite(f) || f <= 0.0f)
                return fail(ErrorCode::InvalidFormat, strCat("rope_freqs.weight holds ", f, ": RoPE frequency factors must be positive"));
    }
    auto model = std::make_unique<LlamaModel>();
    if (auto r = model->bind(file, std::move(*config)); !r) return std::unexpected(r.error());
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace

Result<std::unique_ptr<Model>> loadLlama(const GgufFile& file) { return loadLlamaFamily(file, "llama"); }

Result<std::unique_ptr<Model>> loadQwen2(const GgufFile& file) { return loadLlamaFamily(file, "qwen2"); }

}  // namespace hearth
