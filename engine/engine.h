// The one public facade of the engine for app/: load a model, tokenize through its vocabulary
// and chat format, generate with streaming callbacks. Single-threaded by contract: one owner
// thread calls it. (The step()-based streaming API with several sequences is issue 4.)
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "engine/kv/kv_cache.h"
#include "engine/model/model.h"
#include "engine/sample/sampler.h"
#include "engine/tokenizer/chat_format.h"
#include "engine/tokenizer/tokenizer.h"

namespace hearth {

class GgufFile;

struct EngineOptions {
    int32_t contextLength = 0;  // 0 = the model's own
    int32_t kvBlockSize = 16;
};

enum class FinishReason { Eos, Length, Stop, Context };
const char* finishReasonName(FinishReason r);  // "eos", "length", "stop", "context"

struct GenerateRequest {
    std::vector<TokenId> prompt;   // BOS included when wanted
    int32_t maxTokens = 256;
    SamplingParams sampling;
    // When > 0, GenerateResult::topLogits keeps the n highest (id, logit) pairs of the logits
    // that chose each generated token (for conformance checks against a reference).
    int32_t nTopLogits = 0;
};

struct GenerateTimings {
    // prompt.size() == prefixCacheHitTokens + prefillTokens
    int32_t prefixCacheHitTokens = 0;  // prompt tokens whose K/V were reused, not computed
    int32_t prefillTokens = 0;     // prompt tokens computed
    double prefillMs = 0;
    double ttftMs = 0;             // request submitted -> first generated token
    int32_t decodeTokens = 0;      // generated tokens after the first
    double decodeMs = 0;           // first generated token -> last
};

struct GenerateResult {
    std::vector<TokenId> tokens;   // generated ids, the final end-of-generation id included
    FinishReason finishReason = FinishReason::Length;
    GenerateTimings timings;
    std::vector<std::vector<std::pair<TokenId, float>>> topLogits;  // [tokens][nTopLogits]
};

// Called for each generated token with its text (complete UTF-8 characters only; may be empty
// while a character is incomplete; empty for the end-of-generation token). A last call with
// id -1 carries text left over at the end (an incomplete character, as U+FFFD).
// Return false to stop.
using TokenCallback = std::function<bool(TokenId id, std::string_view text)>;

class Engine {
public:
    // Errors: those of GgufFile::open, Tokenizer::fromGguf and Model::load.
    static Result<std::unique_ptr<Engine>> load(const std::string& path, const EngineOptions& options);
    ~Engine();

    const GgufFile& file() const { return *file_; }
    const ModelConfig& config() const { return model_->config(); }
    const Tokenizer& tokenizer() const { return *tokenizer_; }
    const ChatFormat& chatFormat() const { return chatFormat_; }
    std::string backendName() const { return backend_->name(); }
    int32_t contextLength() const { return contextLength_; }

    // Tokens of a chat prompt: the format's rendering, BOS first when the vocabulary adds it
    // and the rendering does not already start with it.
    std::vector<TokenId> chatPrompt(const std::vector<ChatMessage>& messages) const;
    // Tokens of raw text: BOS as the vocabulary asks, special-token text kept as plain text.
    std::vector<TokenId> rawPrompt(std::string_view text) const;

    // Generates a reply to request.prompt. K/V already computed for a prefix of the prompt is
    // reused, not recomputed: the previous call's tokens (a chat continues without re-reading
    // its history) or any cached whole blocks of earlier calls (a regenerated reply, a second
    // conversation with the same system prompt). Errors: InvalidArgument (prompt, sampling),
    // OutOfMemory (KV cache).
    Result<GenerateResult> generate(const GenerateRequest& request, const TokenCallback& onToken);

private:
    Engine() = default;
    Result<void> reusePrefix(std::span<const TokenId> prompt);
    Result<void> prefill(std::span<const TokenId> prompt, std::vector<float>& logits, GenerateTimings& timings);

    std::unique_ptr<GgufFile> file_;
    std::unique_ptr<Tokenizer> tokenizer_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<KvCache> cache_;
    ChatFormat chatFormat_{ChatFormatKind::Plain};
    KvSequence seq_;                  // the current conversation; its full blocks are published
    std::vector<TokenId> seqTokens_;  // tokens whose K/V are in seq_
    int32_t contextLength_ = 0;
};

}  // namespace hearth
