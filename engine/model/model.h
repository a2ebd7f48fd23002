// A loaded model: hyperparameters read from GGUF metadata, tensors bound to the mapping, and
// the architecture's forward pass. One file per architecture (arch_llama.cpp, ...), chosen by
// a registry keyed on general.architecture.
// Thread-safety: forward() is called by the engine thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/kv/kv_cache.h"
#include "kernels/backend.h"

namespace hearth {

class GgufFile;

struct ModelConfig {
    std::string architecture;   // general.architecture
    std::string name;           // general.name (may be empty)
    int nLayers = 0;
    int nEmbd = 0;
    int nHeads = 0;
    int nKvHeads = 0;
    int headDim = 0;
    int nFf = 0;
    int nVocab = 0;
    int contextLength = 0;
    int nRot = 0;               // rope.dimension_count
    float ropeFreqBase = 10000.0f;
    float rmsEps = 1e-5f;
    RopeStyle ropeStyle = RopeStyle::Pairwise;
    // Interleaved sliding-window attention (Gemma 3): slidingLayers[il] is true for a local
    // layer, which sees the last slidingWindow positions and uses RoPE base ropeFreqBaseSwa.
    // Empty / 0 when every layer is global.
    int32_t slidingWindow = 0;
    std::vector<bool> slidingLayers;  // [nLayers] or empty
    float ropeFreqBaseSwa = 10000.0f;
    bool tiedOutput = false;    // no output.weight: logits use token_embd
    uint64_t nParams = 0;       // elements of all tensors
};

class Model {
public:
    // Reads the hyperparameters and binds every tensor the architecture needs, checking names,
    // shapes and types. The GgufFile must outlive the Model.
    // Errors: Unsupported (architecture), InvalidFormat (missing/out-of-range keys, tensors).
    static Result<std::unique_ptr<Model>> load(const GgufFile& file);
    virtual ~Model() = default;

    const ModelConfig& config() const { return config_; }
    KvLayout kvLayout(int blockSize = 16) const {
        return {config_.nLayers, config_.nKvHeads * config_.headDim, blockSize};
    }

    // Runs tokens (at positions seq.nTokens, seq.nTokens + 1, ...) through the model, writing
    // their K/V into seq (already reserved by the caller) and advancing seq.nTokens.
    // logits: [nVocab] for the last token, or empty when not wanted (e.g. a prefill chunk), or
    // [k, nVocab] for the last k tokens (k <= tokens.size(); a speculative verify), each row
    // bitwise what decoding that token alone would give on the CPU.
    virtual Result<void> forward(Backend& backend, KvCache& cache, KvSequence& seq,
                                 std::span<const int32_t> tokens, std::span<float> logits) = 0;

protected:
    ModelConfig config_;
};

}  // namespace hearth
