// Synthetic models for benchmarks and tests: Llama- or Gemma 3-shaped GGUF files with seeded
// random weights in any weight type, a SentencePiece vocabulary of byte pieces and made-up
// words, written tensor by tensor (an 8B model never sits in memory whole).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/error.h"
#include "kernels/dtype.h"

namespace hearth {

struct SynthShape {
    std::string name;          // "tinyllama-1.1b"
    std::string architecture;  // "llama" or "gemma3"
    int nLayers = 0, nEmbd = 0, nFf = 0, nHeads = 0, nKvHeads = 0;
    int headDim = 0;           // 0: nEmbd / nHeads
    int nVocab = 0;            // at least 259 (3 specials and the 256 byte pieces)
    int contextLength = 0;
    float ropeFreqBase = 10000.0f;
    bool tiedOutput = false;   // no output.weight: logits use token_embd
    int slidingWindow = 0;     // gemma3 only
};

// Every named shape: tiny, tiny-gemma3, llama-110m, smollm2-135m, gemma3-270m,
// tinyllama-1.1b, llama-8b.
const std::vector<SynthShape>& synthShapes();
// The shape called name; InvalidArgument (listing the names) when there is none.
Result<SynthShape> findSynthShape(const std::string& name);

// Weights: near-normal (sum of four uniforms) with standard deviation 0.02, norm weights 1, so
// that activations stay finite over any number of layers. Types: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K,
// Q6_K; every matrix (token embedding included) is written in that type, norms in F32.
struct SynthOptions {
    DType type = DType::F32;
    uint64_t seed = 1;
};

// Writes the model to path, streaming one tensor at a time. Errors: InvalidArgument (a type
// that is not a weight type, or a row length that is not a multiple of its block size), Io.
Result<void> writeSynthModel(const SynthShape& shape, const SynthOptions& options, const std::string& path);

// Bytes the file's tensors take (without metadata), for progress messages and checks.
uint64_t synthTensorBytes(const SynthShape& shape, DType type);

// Quantizes n floats (a multiple of the block size) of any weight type into dst, as ggml's
// reference quantizers do for the 32-element types; the K-quants use a simple min/max search
// per sub-block (valid blocks, not ggml's error-minimising search). dst: rowBytes(t, n) bytes.
void synthQuantizeRow(DType t, const float* src, void* dst, int64_t n);

}  // namespace hearth
