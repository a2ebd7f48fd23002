// Perplexity of a model over chunks of token ids, by llama.cpp's protocol: each chunk is run
// from an empty cache, and token i of a chunk (i >= firstScored) is scored by the log-softmax of
// the logits at position i - 1. The first firstScored tokens are one prefill batch; the scored
// half runs in batches of 32 with every row's logits (equal to one-token decoding, bit for bit).
// Thread-safety: uses the model and backend exclusively while it runs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/model/model.h"

namespace hearth {

struct PerplexityResult {
    std::vector<double> chunkNll;  // the summed negative log-likelihood of each chunk
    std::vector<int64_t> chunkScored;  // how many tokens each chunk scored
    double totalNll() const;
    int64_t nScored() const;
    double perplexity() const;  // exp(total NLL / scored tokens)
};

// Errors: InvalidArgument (firstScored outside [1, chunk length - 1], a token outside the
// vocabulary), and whatever forward() reports.
Result<PerplexityResult> perplexity(Model& model, Backend& backend, std::span<const std::vector<int32_t>> chunks,
                                    int firstScored);

}  // namespace hearth
