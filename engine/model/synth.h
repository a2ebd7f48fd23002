// Synthetic models for benchmarks and tests: GGUF files in the layout of each family Hearth runs
// (llama, qwen2, qwen3, phi3, gemma2, gemma3: their tensor names, fused tensors, biases, norms
// and keys) with seeded random weights in any weight type, and a SentencePiece vocabulary of
// byte pieces and made-up words or a real one copied from another GGUF (a vocab-only file of
// llama.cpp's, say), written tensor by tensor (an 8B model never sits in memory whole).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/error.h"
#include "kernels/dtype.h"

namespace hearth {

struct SynthShape {
    std::string name;  // "tinyllama-1.1b"
    std::string architecture;  // llama, qwen2, qwen3, phi3, gemma2 or gemma3
    int nLayers = 0, nEmbd = 0, nFf = 0, nHeads = 0, nKvHeads = 0;
    int headDim = 0;  // 0: nEmbd / nHeads
    int nVocab = 0;  // at least 259 (3 specials and the 256 byte pieces)
    int contextLength = 0;
    float ropeFreqBase = 10000.0f;
    bool tiedOutput = false;  // no output.weight: logits use token_embd
    int slidingWindow = 0;  // gemma2, gemma3 (phi3 files carry one, not applied)
    bool llama3RopeFreqs = false;  // rope_freqs.weight with Llama 3.1/3.2's "llama3" scaling
};

// Every named shape: tiny, tiny-gemma3, llama-110m, smollm2-135m, gemma3-270m,
// tinyllama-1.1b, llama-8b; per family a tiny one (tiny-qwen2, tiny-qwen3, tiny-phi3,
// tiny-gemma2) and one in the real model's layout (llama3.2-1b, qwen2.5-0.5b, qwen3-0.6b,
// phi3-mini, gemma2-2b).
const std::vector<SynthShape>& synthShapes();
// The shape called name; InvalidArgument (listing the names) when there is none.
Result<SynthShape> findSynthShape(const std::string& name);

// Weights: near-normal (sum of four uniforms) with standard deviation 0.02, norm weights 1, so
// that activations stay finite over any number of layers. Types: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K,
// Q6_K; every matrix (token embedding included) is written in that type, norms in F32.
struct SynthOptions {
    DType type = DType::F32;
    uint64_t seed = 1;
    // A GGUF whose tokenizer.* keys are copied (a real vocabulary, e.g. llama.cpp's
    // ggml-vocab-qwen2.gguf); the shape's nVocab becomes its token count. Empty: made-up words.
    std::string vocabFrom = {};
    // tokenizer.chat_template to write (a real family's template), or empty for none.
    std::string chatTemplate = {};
};

// Writes the model to path, streaming one tensor at a time. Errors: InvalidArgument (a type
// that is not a weight type, or a row length that is not a multiple of its block size), Io,
// and vocabFrom's errors (InvalidFormat, Io; InvalidArgument when it has no tokenizer).
Result<void> writeSynthModel(const SynthShape& shape, const SynthOptions& options, const std::string& path);

// Bytes the file's tensors take (without metadata), for progress messages and checks.
uint64_t synthTensorBytes(const SynthShape& shape, DType type);

// Quantizes n floats (a multiple of the block size) of any weight type into dst, as ggml's
// reference quantizers do for the 32-element types; the K-quants use a simple min/max search
// per sub-block (valid blocks, not ggml's error-minimising search). dst: rowBytes(t, n) bytes.
void synthQuantizeRow(DType t, const float* src, void* dst, int64_t n);

}  // namespace hearth
