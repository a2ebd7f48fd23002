// What one token costs a model, counted from its tensors, for `hearth-cli bench`: the weight
// bytes a decode token reads and the arithmetic of the matrices it multiplies, attention apart.
#pragma once

#include <cstdint>

namespace hearth {

class GgufFile;
struct ModelConfig;

struct ModelCost {
    // Bytes of every weight matrix multiplied for one token; the token-embedding table counts
    // as one row (a lookup) unless it is also the output matrix. Norm vectors are not counted.
    uint64_t weightBytesPerToken = 0;
    uint64_t layerFlopsPerToken = 0;  // 2 × rows × cols of the per-layer matrices
    uint64_t outputFlops = 0;  // 2 × rows × cols of the output matrix (once per prompt in prefill)
    uint64_t kvBytesPerPosition = 0;  // F16 K and V of one position, all layers
    uint64_t tensorBytes = 0;  // every tensor of the file
    // A decode token: every matrix, output included.
    uint64_t decodeFlopsPerToken() const { return layerFlopsPerToken + outputFlops; }
    // A prompt of n tokens: the layers for every token, the output layer once.
    double prefillFlopsPerToken(int64_t n) const {
        return static_cast<double>(layerFlopsPerToken) + static_cast<double>(outputFlops) / static_cast<double>(n);
    }
};

ModelCost modelCost(const GgufFile& file, const ModelConfig& config);

// Attention arithmetic (q·k and the weighted sum of v: 4 × heads × headDim per visible
// position per layer) of the tokens at positions [from, to), sliding windows applied.
double attentionFlops(const ModelConfig& config, int64_t from, int64_t to);

// K and V bytes that attention reads per token, averaged over the tokens at positions
// [from, to): each layer reads every position it sees (sliding windows applied), K and V of
// every KV head, at bytesPerElement (2 for F16, 34/32 for Q8_0).
double kvBytesReadPerToken(const ModelConfig& config, double bytesPerElement, int64_t from, int64_t to);

}  // namespace hearth
