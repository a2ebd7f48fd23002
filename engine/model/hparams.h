// Reading architecture hyperparameters ("{arch}.*" keys) with range checks, shared by the
// architecture files. Every value is bounded so a hostile file cannot size a huge allocation.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/error.h"
#include "engine/model/model.h"

namespace hearth {

class GgufFile;
struct GgufTensorInfo;

// An integer key "{arch}.{suffix}" within [lo, hi]; `fallback` when absent (nullopt = required).
Result<int64_t> readIntKey(const GgufFile& file, std::string_view arch, std::string_view suffix, int64_t lo, int64_t hi,
                           std::optional<int64_t> fallback = std::nullopt);
Result<double> readFloatKey(const GgufFile& file, std::string_view arch, std::string_view suffix, double lo, double hi,
                            std::optional<double> fallback = std::nullopt);

// The common transformer hyperparameters every architecture reads.
Result<ModelConfig> readCommonConfig(const GgufFile& file, std::string_view arch);

// A tensor by name with exactly the given dims ([nCols, nRows] as in GGUF) as a WeightView.
Result<WeightView> bindWeight(const GgufFile& file, const std::string& name, int64_t nCols, int64_t nRows);
// The tensors around the layers that every architecture shares: the token embedding, the
// final norm, and the output matrix (token_embd itself when the file has no output.weight).
struct OutputHead {
    WeightView tokenEmbd;  // [nVocab rows, nEmbd]
    WeightView output;  // [nVocab rows, nEmbd]
    const float* outputNorm = nullptr;  // [nEmbd]
    bool tied = false;
};
Result<OutputHead> bindOutputHead(const GgufFile& file, const ModelConfig& c);

// Refuses RoPE scaling by a factor ("{arch}.rope.scaling.type" other than none, with a factor
// other than 1), which Backend::rope does not apply, rather than run with wrong logits.
// precomputedType: a type whose scaling the file carries another way and the architecture
// reads (llama's "llama3": rope_freqs.weight); empty for none.
Result<void> refuseRopeScaling(const GgufFile& file, std::string_view arch, std::string_view precomputedType = {});

// A 1-D F32 tensor (norm weights) of length n.
Result<const float*> bindNorm(const GgufFile& file, const std::string& name, int64_t n);

// RoPE frequency factors (llama.cpp's freq_factors: per-pair divisors of the angle) from a 1-D
// F32 tensor of n values, each finite and positive.
Result<std::vector<float>> readFreqFactors(const GgufFile& file, const std::string& name, int64_t n);

// Which layers are local (sliding-window) layers: "{arch}.attention.sliding_window_pattern" is
// a period P (layer il is local when il % P < P - 1; P = 0 makes every layer local, as
// llama.cpp's set_swa_pattern) or a per-layer array (true / nonzero = local); absent,
// defaultPeriod (Gemma 2: 2, Gemma 3: 6).
Result<std::vector<bool>> readSlidingLayers(const GgufFile& file, std::string_view arch, int nLayers,
                                            int64_t defaultPeriod);

}  // namespace hearth
