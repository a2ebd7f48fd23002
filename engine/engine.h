// The one public facade of the engine for app/: load a model, tokenize through its vocabulary
// and chat format, submit requests and step() them together (continuous batching), or
// generate() one with a streaming callback. Single-threaded by contract: one owner thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "engine/kv/kv_cache.h"
#include "engine/model/model.h"
#include "engine/model/pack_cache.h"
#include "engine/runner/beam_runner.h"
#include "engine/sample/sampler.h"
#include "engine/sched/scheduler.h"
#include "engine/snapshot/kv_snapshot.h"
#include "engine/snapshot/model_fingerprint.h"
#include "engine/spec/spec_options.h"
#include "engine/tokenizer/chat_format.h"
#include "engine/tokenizer/tokenizer.h"

namespace hearth {

class GgufFile;
class SuffixIndex;

struct EngineOptions {
    // 0 = the model's own. Also the KV cache's size, shared by all requests in flight: when
    // they need more, the newest is preempted and recomputed later.
    int32_t contextLength = 0;
    int32_t kvBlockSize = 16;
    // Q8_0 holds K/V in 34/64 of F16's memory; it needs a head size that is a multiple of 32.
    KvElementType kvType = KvElementType::F16;
    // Models with sliding-window layers (Gemma 2, Gemma 3): those layers keep only their window's
    // K/V, in a pool of their own (engine/kv/kv_cache.h); false keeps every position for every
    // layer (the all-positions layout, for comparisons: tests, hearth-cli bench-kv).
    bool kvWindowPools = true;
    // F16 K stored dimension-major within each block when the backend prefers it (the CPU
    // backends: attention loads eight positions of a dimension at once); false keeps K rows
    // token-major (for comparisons: attention_bench, hearth-cli bench --kv-k rows).
    bool kvKDimMajor = true;
    // F16 V stored head by head within each block when the backend prefers it (the CPU backends:
    // attention reads a head's rows of a block as one run); false keeps V rows token-major (for
    // comparisons: hearth-cli bench --kv-v rows).
    bool kvVHeadMajor = true;
    SchedulerConfig scheduler{};  // token budget per step, most sequences at once
    // The model file's fingerprint when the caller has it cached (by path, size and mtime);
    // when absent, load() hashes every byte of the file.
    std::optional<ModelFingerprint> modelFingerprint;
    // CPU threads; 0 = HEARTH_THREADS from the environment, else one per physical core.
    int32_t nThreads = 0;
    // Best: the CUDA plugin when a usable NVIDIA GPU is found (probeCuda), else the fastest CPU
    // backend; HEARTH_BACKEND=cpu in the environment keeps it on the CPU, HEARTH_BACKEND=cuda asks
    // for CUDA as Cuda does. Cpu: the fastest CPU backend here (AVX2 when the CPU has it;
    // HEARTH_CPU in the environment caps the level, HEARTH_CPU=reference forces the reference, and
    // backendNote() then says why the reference runs); Reference: the scalar reference.
    // Cuda: the CUDA plugin on device 0; when it cannot start, the best CPU backend and
    // backendNote() says why.
    enum class BackendKind { Best, Cpu, Reference, Cuda };
    BackendKind backend = BackendKind::Best;
    // Tests: makes the backend to load with instead of `backend` (a test backend with memory of
    // its own, tests/support/device_memory_backend.h).
    std::function<std::unique_ptr<Backend>()> makeBackend;
    // Called during load() after each weight matrix the backend lays out for its kernels (the
    // CPU backends repack the quantized types: Model::packWeights), with matrices done and total.
    std::function<void(int done, int total)> loadProgress;
    // false: the backend does not lay out the weights for its kernels (no repacking: commands that
    // only read facts, hearth-cli info); results are the same, computed from the file's layout.
    bool packWeights = true;
    // The disk cache of the backend's packed weights (engine/model/pack_cache.h): a later load
    // maps the copies the first one saved instead of making them again. false, or
    // HEARTH_PACK_CACHE=0 in the environment: neither read nor written. packCacheDir empty:
    // defaultPackCacheDir() (HEARTH_PACK_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/hearth/packed).
    bool packCache = true;
    std::string packCacheDir;
    // The history index's cap (SpecDrafter::History): tokens of earlier messages kept, ~8 bytes
    // each; the oldest are dropped beyond it.
    int64_t historyCapTokens = int64_t{1} << 21;
};

// Whether loading under this kind looks for a GPU: Cuda, or Best unless HEARTH_BACKEND=cpu (Best
// then takes CUDA where probeCuda finds a usable GPU, or HEARTH_BACKEND=cuda asks for it).
bool cudaConsidered(EngineOptions::BackendKind kind);

// Eos: an end-of-generation token; Length: maxTokens; Stop: a stop string (or generate()'s
// callback said stop); Context: the context is full; Timeout: timeoutMs passed;
// Cancelled: cancel(); Error: see EngineEvent::error.
enum class FinishReason { Eos, Length, Stop, Context, Timeout, Cancelled, Error };
// "eos", "length", "stop", "context", "timeout", "cancelled", "error"
const char* finishReasonName(FinishReason r);

struct GenerateRequest {
    std::vector<TokenId> prompt;  // BOS included when wanted
    int32_t maxTokens = 256;
    SamplingParams sampling;
    // When > 0, GenerateResult::topLogits keeps the n highest (id, logit) pairs of the logits
    // that chose each generated token (for conformance checks against a reference).
    int32_t nTopLogits = 0;
    // When true, each Token event's topLogits values are log-probabilities (log-softmax of the
    // raw logits, before any sampling stage) instead of logits, and EngineEvent::logprob is
    // the generated token's (the local server's logprobs).
    bool logprobs = false;
    std::vector<std::string> stop;  // stop strings: generation ends before them, never shown
    int64_t timeoutMs = 0;  // > 0: finish with Timeout this long after submit()
    // Speculative decoding (engine/spec), for submit() and generate() alike: while its decode
    // chunk is planned the request drafts tokens, step() verifies them in the same batch as the
    // other requests' chunks and keeps what the target model agrees with. The same tokens
    // (greedy) or the same distribution (sampling) as without; one step may then emit several
    // Token events for the request. Requests with equal options share (one at a time) a
    // session the engine keeps: a draft model stays loaded, the policy's on/off carries over.
    SpecOptions spec{};
};

using RequestId = SeqId;

struct GenerateTimings {
    // prompt.size() == prefixCacheHitTokens + prefillTokens
    int32_t prefixCacheHitTokens = 0;  // prompt tokens whose K/V were reused, not computed
    int32_t prefillTokens = 0;  // prompt tokens computed
    double prefillMs = 0;  // request submitted -> prompt done (shared with other requests)
    double ttftMs = 0;  // request submitted -> first generated token
    int32_t decodeTokens = 0;  // generated tokens after the first step's (one, or more with speculation)
    double decodeMs = 0;  // first generated token -> last
    // Tokens per second; 0 when nothing was timed.
    double prefillTokensPerSecond() const { return prefillMs > 0 ? prefillTokens / prefillMs * 1000.0 : 0.0; }
    double decodeTokensPerSecond() const { return decodeMs > 0 ? decodeTokens / decodeMs * 1000.0 : 0.0; }
};

struct GenerateResult {
    std::vector<TokenId> tokens;  // generated ids, the final end-of-generation id included
    FinishReason finishReason = FinishReason::Length;
    GenerateTimings timings;
    std::vector<std::vector<std::pair<TokenId, float>>> topLogits;  // [tokens][nTopLogits]
    SpecStats spec;  // drafted, accepted and bonus tokens when request.spec was on (else zeros)
};

// What step() reports. Token: one generated token and the text it releases (whole UTF-8
// characters, possibly empty while a character is incomplete or text is held back as a
// possible stop string). Finish: the last event of a request, with text left over (held back
// text, an incomplete character as U+FFFD), the reason, the timings and, when it speculated,
// the speculation counters.
struct EngineEvent {
    enum class Kind { Token, Finish };
    Kind kind = Kind::Token;
    RequestId request = 0;
    TokenId token = -1;  // Token
    std::string text;
    std::vector<std::pair<TokenId, float>> topLogits;  // Token, when nTopLogits > 0
    float logprob = 0;  // Token, when request.logprobs
    FinishReason reason = FinishReason::Length;  // Finish
    GenerateTimings timings;  // Finish
    std::optional<Error> error;  // Finish with reason Error
    SpecStats spec;  // Finish, when request.spec was on
};

struct EngineMetrics {
    int32_t blocksUsed = 0, blocksFree = 0, blocksCached = 0, blocksTotal = 0;
    int32_t nRunning = 0, nWaiting = 0;
    int64_t nPreemptions = 0;  // sequences whose KV was released to make room, since load
    // The window group's pool (sliding-window models with kvWindowPools; else 0): the blocks
    // above are the full-attention group's.
    int32_t windowBlocksUsed = 0, windowBlocksFree = 0, windowBlocksCached = 0, windowBlocksTotal = 0;
};

class EngineRequests;

// What a model file gives before any backend or KV cache: the architecture's hyperparameters
// with every tensor checked and bound to the mapping (binding reads no weights), the vocabulary
// and the chat format. Engine::load starts with these checks; the model picker runs them to say
// whether a file loads and, when not, why.
struct ModelParts {
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> tokenizer;
    ChatFormat chatFormat{ChatFormatKind::Plain};
};
// file must outlive the parts. Errors: those of Model::load and Tokenizer::fromGguf, and
// InvalidFormat when the vocabulary has more tokens than the embedding.
Result<ModelParts> loadModelParts(const GgufFile& file, const ModelLoadOptions& options = {});

// Called for each generated token with its text (complete UTF-8 characters only; may be empty
// while a character is incomplete; empty for the end-of-generation token). A last call with
// id -1 carries text left over at the end (an incomplete character, as U+FFFD).
// Return false to stop (finish reason Stop).
using TokenCallback = std::function<bool(TokenId id, std::string_view text)>;

class Engine {
public:
    // Errors: those of GgufFile::open and loadModelParts.
    static Result<std::unique_ptr<Engine>> load(const std::string& path, const EngineOptions& options);
    ~Engine();

    const GgufFile& file() const { return *file_; }
    const ModelConfig& config() const { return model_->config(); }
    const Tokenizer& tokenizer() const { return *tokenizer_; }
    const ChatFormat& chatFormat() const { return chatFormat_; }
    std::string backendName() const { return backend_->name(); }
    // Why the backend asked for is not the one running (empty when it is).
    const std::string& backendNote() const { return backendNote_; }
    int32_t contextLength() const { return contextLength_; }
    // What load() did with the packed weights and their disk cache: hit, miss (the file is written
    // on a thread of its own; the engine's destructor waits for it), a file ignored (note says why).
    const PackCacheReport& packCacheReport() const { return packCache_; }

    // KV persistence (engine/snapshot/kv_snapshot.h): the chain root this engine's blocks
    // start from, the keys of a token sequence's whole blocks, the cached blocks holding a
    // prefix of tokens (those skip() accepts left out), and a checked import of saved blocks
    // (precondition: idle()). Tokens whose KV is already cached are counted, not copied.
    const KvRootInfo& kvRoot() const { return kvRoot_; }
    int32_t kvBlockSize() const { return cache_->layout().blockSize; }
    const KvLayout& kvLayout() const { return cache_->layout(); }
    size_t kvBytesPerBlock() const { return cache_->bytesPerBlock(); }  // K and V of every layer
    std::vector<BlockKey> kvChainKeys(std::span<const TokenId> tokens) const;
    std::vector<KvBlockRecord> exportKv(std::span<const TokenId> tokens,
                                        const std::function<bool(const BlockKey&)>& skip = {}) const;
    KvImportResult importKv(const KvRootInfo& saved, std::span<const KvBlockRecord> records,
                            std::span<const TokenId> tokens);

    // Tokens of a chat prompt: the format's rendering with options (by default the assistant's
    // turn opened, and reasoning on where the format can turn it off), BOS first when the
    // vocabulary adds it and the rendering does not already start with it.
    std::vector<TokenId> chatPrompt(const std::vector<ChatMessage>& messages, const RenderOptions& options = {}) const;
    // Tokens of raw text: BOS as the vocabulary asks, special-token text kept as plain text.
    std::vector<TokenId> rawPrompt(std::string_view text) const;

    // Generates a reply to request.prompt. K/V already computed for a prefix of the prompt is
    // reused, not recomputed: the previous call's tokens (a chat continues without re-reading
    // its history) or any cached whole blocks of earlier calls (a regenerated reply, a second
    // conversation with the same system prompt). Errors: InvalidArgument (prompt, sampling),
    // OutOfMemory (KV cache).
    // Precondition: no other request in flight (their events would be dropped).
    Result<GenerateResult> generate(const GenerateRequest& request, const TokenCallback& onToken);

    // Queues a request; it runs in the next step()s. Errors: InvalidArgument (prompt, sampling,
    // speculation options, a draft model with another vocabulary), those of loading the draft
    // model.
    Result<RequestId> submit(GenerateRequest request);
    // Computes one step of every admitted request (a prefill chunk or one decode token each, plus
    // the drafted tokens of speculating requests) and returns what happened, in order. Empty
    // when nothing is in flight.
    std::vector<EngineEvent> step();
    // The index SpecDrafter::History drafts from: earlier conversations' messages as token
    // sequences of this model's vocabulary (app/ adds the store's on load and each message as it
    // is saved). Lives as long as the engine; adding between steps is safe.
    void addHistory(std::span<const TokenId> tokens);
    const SuffixIndex& history() const { return *history_; }  // engine/spec/suffix_index.h
    void clearHistory();
    // Forgets the idle speculation sessions (drafters, loaded draft models, policies): the next
    // speculating request starts afresh, as in a new engine (benchmarks that compare prompts).
    void resetSpeculation();
    // The request finishes (reason Cancelled) at the next step(); unknown ids are ignored.
    void cancel(RequestId id);
    bool idle() const;  // nothing submitted is unfinished
    // Beam search from prompt (engine/runner/beam_runner.h); its end tokens are the
    // vocabulary's end-of-generation tokens, maxTokens is capped by the context (hypotheses cut
    // there end with BeamEnd::Context), text comes from the tokenizer (stop strings work).
    // Errors: InvalidArgument (prompt, parameters, logit-bias ids, requests in flight), those of
    // runBeamSearch.
    Result<BeamSearchResult> beamSearch(const std::vector<TokenId>& prompt, BeamSearchParams params);
    EngineMetrics metrics() const;

private:
    Engine();
    Result<void> validatePrompt(const std::vector<TokenId>& prompt) const;
    // The backends' copies of the weights (Model::packWeights); false when the device ran out of
    // memory for its matrices (its packWeight threw std::bad_alloc). Other errors throw.
    bool packWeights(const ModelFingerprint& fingerprint, const EngineOptions& options);

    std::unique_ptr<GgufFile> file_;
    std::unique_ptr<Tokenizer> tokenizer_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Backend> backend_;
    // A model split between the GPU and the CPU (layer placement): the CPU backend of the later
    // layers and the output head (Model::splitLayers); null otherwise.
    std::unique_ptr<Backend> hostBackend_;
    std::string backendNote_;
    std::unique_ptr<KvCache> cache_;
    std::unique_ptr<SuffixIndex> history_;  // before requests_: their sessions draft from it
    std::unique_ptr<EngineRequests> requests_;  // scheduler, runner and per-request state
    ChatFormat chatFormat_{ChatFormatKind::Plain};
    int32_t contextLength_ = 0;
    KvRootInfo kvRoot_;
    PackCacheReport packCache_;
    std::unique_ptr<MappedFile> packMapping_;  // a cache hit's copies, read by the model
    std::unique_ptr<PackCacheWrite> packWrite_;  // last: destroyed (joined) before the copies it reads
};

}  // namespace hearth
