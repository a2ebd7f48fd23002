// The Gemma 3 architecture (arch "gemma3"): embeddings scaled by sqrt(nEmbd), sandwich RMSNorms
// around attention and FFN, per-head RMSNorm of Q and K before NeoX (half-split) RoPE, local
// sliding-window layers interleaved with global ones (each with its own RoPE base), GeGLU FFN,
// output tied to token_embd. One pass runs a batch of sequences (ForwardBatch): their rows go
// together through every op but attention. Buffers are commented with their shapes, llama2.c style.
// Numerics follow llama.cpp's gemma3 graph, which is what GGUF files are converted and tested for.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "engine/str_cat.h"
#include "engine/model/arch_registry.h"
#include "engine/model/forward_batch.h"
#include "engine/model/gguf.h"
#include "engine/model/hparams.h"

namespace hearth {
namespace {

constexpr std::string_view kArch = "gemma3";
constexpr int64_t kMaxWindow = 1 << 24;
// llama.cpp's default when the file names no pattern: five local layers, then one global.
constexpr int64_t kDefaultSlidingPattern = 6;
// Gemma 3 27B (62 layers) scales queries by 1/sqrt(nEmbd / nHeads) instead of 1/sqrt(headDim)
// (query_pre_attn_scalar in gemma_pytorch's config.py; llama.cpp keys it on the layer count,
// since GGUF files carry no such key).
constexpr int kLayers27B = 62;

struct Gemma3Layer {
    const float* attnNorm = nullptr;      // [nEmbd]
    const float* qNorm = nullptr;         // [headDim], shared by every query head
    const float* kNorm = nullptr;         // [headDim], shared by every KV head
    const float* postAttnNorm = nullptr;  // [nEmbd]
    const float* ffnNorm = nullptr;       // [nEmbd]
    const float* postFfwNorm = nullptr;   // [nEmbd]
    WeightView wq, wk, wv, wo;            // [nHeads*headDim, nEmbd], [kvDim, nEmbd] x2, [nEmbd, nHeads*headDim]
    WeightView wGate, wUp, wDown;         // [nFf, nEmbd] x2, [nEmbd, nFf]
};

class Gemma3Model final : public Model {
public:
    Result<void> bind(const GgufFile& file, ModelConfig config, float attentionScale, float logitSoftcap);
    Result<void> forwardBatch(Backend& backend, KvCache& cache, std::span<const ForwardItem> items) override;

private:
    Result<void> bindLayer(const GgufFile& file, int il);
    void attentionBlock(Backend& b, KvCache& cache, int layer, int64_t nTokens);
    void feedForwardBlock(Backend& b, int layer, int64_t nTokens);
    void resizeActivations(int64_t nTokens);

    OutputHead head_;
    std::vector<Gemma3Layer> layers_;
    float attentionScale_ = 1.0f;
    float logitSoftcap_ = 0.0f;  // 0: none

    // The batch's rows (nTokens of them, all items together) and their positions.
    ForwardBatch batch_;
    // Activations, resized per call: x/xn/proj [nTokens, nEmbd]; q/att [nTokens, nHeads*headDim];
    // k/v [nTokens, kvDim]; gate/up [nTokens, nFf].
    std::vector<float> x_, xn_, q_, k_, v_, att_, proj_, gate_, up_;
};

Result<void> Gemma3Model::bind(const GgufFile& file, ModelConfig config, float attentionScale, float logitSoftcap) {
    config_ = std::move(config);
    attentionScale_ = attentionScale;
    logitSoftcap_ = logitSoftcap;
    const ModelConfig& c = config_;
    auto head = bindOutputHead(file, c);
    if (!head) return std::unexpected(head.error());
    head_ = *head;
    config_.tiedOutput = head_.tied;
    layers_.resize(static_cast<size_t>(c.nLayers));
    for (int il = 0; il < c.nLayers; ++il)
        if (auto r = bindLayer(file, il); !r) return r;
    return {};
}

Result<void> Gemma3Model::bindLayer(const GgufFile& file, int il) {
    const ModelConfig& c = config_;
    const int64_t qDim = int64_t{c.nHeads} * c.headDim, kvDim = int64_t{c.nKvHeads} * c.headDim;
    Gemma3Layer& L = layers_[static_cast<size_t>(il)];
    const std::string p = strCat("blk.", il, ".");
    // The converter already added 1 to every Gemma norm weight: they are plain multipliers.
    const auto norm = [&](const char* n, int64_t size, const float*& dst) -> Result<void> {
        auto r = bindNorm(file, p + n, size);
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
    for (auto r : {norm("attn_norm.weight", c.nEmbd, L.attnNorm), norm("attn_q_norm.weight", c.headDim, L.qNorm),
                   norm("attn_k_norm.weight", c.headDim, L.kNorm),
                   norm("post_attention_norm.weight", c.nEmbd, L.postAttnNorm),
                   norm("ffn_norm.weight", c.nEmbd, L.ffnNorm), norm("post_ffw_norm.weight", c.nEmbd, L.postFfwNorm),
                   weight("attn_q.weight", c.nEmbd, qDim, L.wq), weight("attn_k.weight", c.nEmbd, kvDim, L.wk),
                   weight("attn_v.weight", c.nEmbd, kvDim, L.wv), weight("attn_output.weight", qDim, c.nEmbd, L.wo),
                   weight("ffn_gate.weight", c.nEmbd, c.nFf, L.wGate), weight("ffn_up.weight", c.nEmbd, c.nFf, L.wUp),
                   weight("ffn_down.weight", c.nFf, c.nEmbd, L.wDown)})
        if (!r) return r;
    return {};
}

void Gemma3Model::attentionBlock(Backend& b, KvCache& cache, int il, int64_t nTokens) {
    const ModelConfig& c = config_;
    const Gemma3Layer& L = layers_[static_cast<size_t>(il)];
    const bool local = !c.slidingLayers.empty() && c.slidingLayers[static_cast<size_t>(il)];
    const float ropeBase = local ? c.ropeFreqBaseSwa : c.ropeFreqBase;
    b.rmsNorm(x_.data(), L.attnNorm, nTokens, c.nEmbd, c.rmsEps, xn_.data());
    b.matmul(L.wq, xn_.data(), nTokens, q_.data());
    b.matmul(L.wk, xn_.data(), nTokens, k_.data());
    b.matmul(L.wv, xn_.data(), nTokens, v_.data());
    // QK-norm: each head's row of headDim normalised on its own (V is not normalised).
    b.rmsNorm(q_.data(), L.qNorm, nTokens * c.nHeads, c.headDim, c.rmsEps, q_.data());
    b.rmsNorm(k_.data(), L.kNorm, nTokens * c.nKvHeads, c.headDim, c.rmsEps, k_.data());
    b.rope(q_.data(), nTokens, c.nHeads, c.headDim, c.nRot, batch_.positions(), ropeBase, c.ropeStyle, nullptr);
    b.rope(k_.data(), nTokens, c.nKvHeads, c.headDim, c.nRot, batch_.positions(), ropeBase, c.ropeStyle, nullptr);
    // llama.cpp masks key p0 for query p1 when p1 - p0 >= window (llama-hparams is_masked_swa,
    // LLAMA_SWA_TYPE_STANDARD): the query sees the window positions (p1 - window, p1], which
    // is AttentionShape::slidingWindow's meaning. The full cache is kept; the window only masks.
    const AttentionShape shape{c.nHeads, c.nKvHeads, c.headDim, attentionScale_, local ? c.slidingWindow : 0};
    batch_.attention(b, cache, il, shape, q_.data(), k_.data(), v_.data(), att_.data());
    b.matmul(L.wo, att_.data(), nTokens, proj_.data());
    b.rmsNorm(proj_.data(), L.postAttnNorm, nTokens, c.nEmbd, c.rmsEps, proj_.data());
    b.add(x_.data(), proj_.data(), nTokens * c.nEmbd);
}

void Gemma3Model::feedForwardBlock(Backend& b, int il, int64_t nTokens) {
    const ModelConfig& c = config_;
    const Gemma3Layer& L = layers_[static_cast<size_t>(il)];
    b.rmsNorm(x_.data(), L.ffnNorm, nTokens, c.nEmbd, c.rmsEps, xn_.data());
    b.matmul(L.wGate, xn_.data(), nTokens, gate_.data());
    b.matmul(L.wUp, xn_.data(), nTokens, up_.data());
    b.geglu(gate_.data(), up_.data(), nTokens * c.nFf, gate_.data());
    b.matmul(L.wDown, gate_.data(), nTokens, proj_.data());
    b.rmsNorm(proj_.data(), L.postFfwNorm, nTokens, c.nEmbd, c.rmsEps, proj_.data());
    b.add(x_.data(), proj_.data(), nTokens * c.nEmbd);
}

void Gemma3Model::resizeActivations(int64_t nTokens) {
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

Result<void> Gemma3Model::forwardBatch(Backend& b, KvCache& cache, std::span<const ForwardItem> items) {
    if (totalRows(items) > kMaxRowsPerPass) return forwardInPasses(b, cache, items);
    if (auto r = batch_.prepare(*this, cache, items); !r) return r;
    const int64_t nTokens = batch_.nRows();
    if (nTokens == 0) return {};
    resizeActivations(nTokens);
    b.embeddingRows(head_.tokenEmbd, batch_.tokens(), nTokens, x_.data());
    // Gemma scales token embeddings by sqrt(nEmbd), in float as llama.cpp does (sqrtf, not
    // rounded to bf16 as Hugging Face's bf16 checkpoints do).
    // TODO(#3): a Backend scale op once activations live on a device.
    const float embdScale = std::sqrt(static_cast<float>(config_.nEmbd));
    for (float& v : x_) v *= embdScale;
    for (int il = 0; il < config_.nLayers; ++il) {
        attentionBlock(b, cache, il, nTokens);
        feedForwardBlock(b, il, nTokens);
    }
    batch_.finish(b, head_, config_.rmsEps, x_.data());
    if (logitSoftcap_ > 0)  // Gemma 2 style cap, only when the file asks for it
        for (const ForwardItem& item : items) {
            if (item.tokens.empty()) continue;  // skipped: its logits were not written
            for (float& v : item.logits) v = logitSoftcap_ * std::tanh(v / logitSoftcap_);
        }
    return {};
}

// Which layers are local. gemma3.attention.sliding_window_pattern is a period P (layer il is
// local when il % P < P - 1; P = 0 makes every layer local, as in llama.cpp's set_swa_pattern)
// or a per-layer array (true / nonzero = local); absent, P = 6.
Result<std::vector<bool>> readSlidingLayers(const GgufFile& file, int nLayers) {
    const std::string key = strCat(kArch, ".attention.sliding_window_pattern");
    std::vector<bool> local(static_cast<size_t>(nLayers));
    const GgufValue* v = file.find(key);
    if (v && v->asArray()) {
        const GgufArray& a = *v->asArray();
        if (a.size() != static_cast<uint64_t>(nLayers))
            return fail(ErrorCode::InvalidFormat, strCat("metadata key ", key, " has ", a.size(),
                                                         " elements for ", nLayers, " layers"));
        for (int il = 0; il < nLayers; ++il) {
            const GgufValue item = a.item(static_cast<uint64_t>(il));
            const std::optional<int64_t> n = item.asInt();
            const std::optional<bool> flag = n ? std::optional<bool>(*n != 0) : item.asBool();
            if (!flag)
                return fail(ErrorCode::InvalidFormat, strCat("metadata key ", key, " must hold bools or integers"));
            local[static_cast<size_t>(il)] = *flag;
        }
        return local;
    }
    auto period = readIntKey(file, kArch, "attention.sliding_window_pattern", 0, nLayers + 1, kDefaultSlidingPattern);
    if (!period) return std::unexpected(period.error());
    for (int il = 0; il < nLayers; ++il) local[static_cast<size_t>(il)] = *period == 0 || il % *period < *period - 1;
    return local;
}

}  // namespace

Result<std::unique_ptr<Model>> loadGemma3(const GgufFile& file) {
    auto config = readCommonConfig(file, kArch);
    if (!config) return std::unexpected(config.error());
    auto valueLength = readIntKey(file, kArch, "attention.value_length", 1, 1 << 16, config->headDim);
    if (!valueLength) return std::unexpected(valueLength.error());
    if (*valueLength != config->headDim)
        return fail(ErrorCode::Unsupported, "gemma3 with value_length different from key_length is not supported");
    if (auto r = refuseRopeScaling(file, kArch); !r) return std::unexpected(r.error());
    auto window = readIntKey(file, kArch, "attention.sliding_window", 0, kMaxWindow, 0);
    if (!window) return std::unexpected(window.error());
    if (*window > 0) {
        auto local = readSlidingLayers(file, config->nLayers);
        if (!local) return std::unexpected(local.error());
        config->slidingWindow = static_cast<int32_t>(*window);
        config->slidingLayers = std::move(*local);
    }
    // Local layers keep RoPE base 10k, global ones 1M (Gemma 3 report, arXiv 2503.19786, "Long
    // context"); llama.cpp reads rope.freq_base_swa when a file has it.
    auto baseSwa = readFloatKey(file, kArch, "rope.freq_base_swa", 1.0, 1e12, 10000.0);
    if (!baseSwa) return std::unexpected(baseSwa.error());
    config->ropeFreqBaseSwa = static_cast<float>(*baseSwa);
    config->ropeStyle = RopeStyle::HalfSplit;
    auto softcap = readFloatKey(file, kArch, "final_logit_softcapping", 0.0, 1e6, 0.0);
    if (!softcap) return std::unexpected(softcap.error());
    const float attentionScale = config->nLayers == kLayers27B
                                     ? 1.0f / std::sqrt(static_cast<float>(config->nEmbd / config->nHeads))
                                     : 1.0f / std::sqrt(static_cast<float>(config->headDim));
    auto model = std::make_unique<Gemma3Model>();
    if (auto r = model->bind(file, std::move(*config), attentionScale, static_cast<float>(*softcap)); !r)
        return std::unexpected(r.error());
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace hearth
