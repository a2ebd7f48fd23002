// Engine facade: wires GGUF, tokenizer, model, backend and KV cache; the generate loop.
#include "engine/str_cat.h"
#include "engine/engine.h"

#include <algorithm>

#include "engine/model/gguf.h"
#include "engine/util/sha256.h"

namespace hearth {
namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}
constexpr int32_t kPrefillChunk = 256;  // tokens per forward call while prefilling
// Bumped whenever a kernel change alters K/V values, so cached KV of older builds is not reused.
constexpr uint32_t kNumericsVersion = 1;

// Identifies the model's bytes for the KV chain root: the file's size, every tensor's name,
// type, shape and offset, and the first and last 4 KiB of each tensor's data.
// TODO(#6): the hash of every byte, cached by (path, size, modification time), before KV
// blocks are persisted; this sample is enough inside one process, where the cache is the model's.
Sha256Digest modelFingerprint(const GgufFile& file) {
    Sha256 h;
    h.update(strCat("gguf size=", file.fileSize(), " data=", file.dataOffset(), "\n"));
    for (const GgufTensorInfo& t : file.tensors()) {
        h.update(strCat(t.name, " type=", static_cast<int>(t.type), " offset=", t.offset, " dims="));
        for (int64_t d : t.dims) h.update(strCat(d, ","));
        const std::span<const uint8_t> data = file.tensorData(t);
        const size_t n = std::min<size_t>(data.size(), 4096);
        h.update(data.first(n));
        h.update(data.last(n));
    }
    return h.finish();
}

// The n highest logits, descending; ties: lower id first.
std::vector<std::pair<TokenId, float>> topLogits(std::span<const float> logits, int32_t n) {
    std::vector<std::pair<TokenId, float>> all(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) all[i] = {static_cast<TokenId>(i), logits[i]};
    const auto k = static_cast<std::ptrdiff_t>(std::min<size_t>(static_cast<size_t>(n), all.size()));
    std::partial_sort(all.begin(), all.begin() + k, all.end(), [](const auto& a, const auto& b) {
        return a.second > b.second || (a.second == b.second && a.first < b.first);
    });
    all.resize(static_cast<size_t>(k));
    return all;
}

}  // namespace

const char* finishReasonName(FinishReason r) {
    switch (r) {
    case FinishReason::Eos: return "eos";
    case FinishReason::Length: return "length";
    case FinishReason::Stop: return "stop";
    case FinishReason::Context: return "context";
    }
    return "length";
}

Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::load(const std::string& path, const EngineOptions& options) {
    std::unique_ptr<Engine> e(new Engine());
    auto file = GgufFile::open(path);
    if (!file) return std::unexpected(file.error());
    e->file_ = std::move(*file);
    auto model = Model::load(*e->file_);
    if (!model) return std::unexpected(model.error());
    e->model_ = std::move(*model);
    auto tokenizer = Tokenizer::fromGguf(*e->file_);
    if (!tokenizer) return std::unexpected(tokenizer.error());
    e->tokenizer_ = std::move(*tokenizer);
    if (e->tokenizer_->nVocab() > e->config().nVocab)
        return fail(ErrorCode::InvalidFormat,
                    strCat("the vocabulary has ", e->tokenizer_->nVocab(), " tokens but the model's embedding only ", e->config().nVocab));
    const GgufValue* tmpl = e->file_->find("tokenizer.chat_template");
    e->chatFormat_ = ChatFormat::detect(tmpl && tmpl->asString() ? *tmpl->asString() : std::string(),
                                        e->config().architecture);
    if (options.contextLength < 0 || options.kvBlockSize <= 0 || options.kvBlockSize > 1024)
        return fail(ErrorCode::InvalidArgument, "context length and KV block size must be positive");
    e->contextLength_ = options.contextLength > 0 ? std::min(options.contextLength, e->config().contextLength)
                                                  : e->config().contextLength;
    e->backend_ = makeBestCpuBackend();  // AVX2 when the CPU has it; HEARTH_BACKEND=reference forces the reference
    const KvLayout layout = e->model_->kvLayout(options.kvBlockSize);
    const Sha256Digest fingerprint = modelFingerprint(*e->file_);
    const KvChainRoot root = KvChainRoot::derive(fingerprint, layout, e->backend_->name(), kNumericsVersion);
    auto cache = KvCache::create(layout, e->contextLength_, root);
    if (!cache) return std::unexpected(cache.error());
    e->cache_ = std::move(*cache);
    return e;
}

std::vector<TokenId> Engine::chatPrompt(const std::vector<ChatMessage>& messages) const {
    const std::vector<TextSegment> segments = chatFormat_.render(messages, true);
    std::vector<TokenId> ids = tokenizer_->encode(segments, false);
    const bool startsWithBos = !ids.empty() && ids.front() == tokenizer_->bos();
    if (tokenizer_->addBosByDefault() && tokenizer_->bos() >= 0 && !startsWithBos)
        ids.insert(ids.begin(), tokenizer_->bos());
    return ids;
}

std::vector<TokenId> Engine::rawPrompt(std::string_view text) const {
    return tokenizer_->encode(text, tokenizer_->addBosByDefault(), false);
}

Result<void> Engine::reusePrefix(std::span<const TokenId> prompt) {
    // The last prompt token is always computed: its logits choose the first reply token.
    const std::span<const TokenId> cacheable = prompt.first(prompt.size() - 1);
    const auto mismatch = std::mismatch(cacheable.begin(), cacheable.end(), seqTokens_.begin(), seqTokens_.end());
    const auto common = static_cast<int32_t>(mismatch.first - cacheable.begin());
    const auto cached = static_cast<int32_t>(cache_->pool().longestCachedPrefix(cache_->root().key, cacheable).blocks.size()) *
                        cache_->layout().blockSize;
    if (cached > common) {
        // Earlier blocks serve better than the previous call's tokens: start a fresh sequence
        // (its full blocks stay cached) and let the plan below take the cached ones.
        cache_->release(seq_);
        seqTokens_.clear();
    } else {
        cache_->rollback(seq_, common);
        seqTokens_.resize(static_cast<size_t>(common));
    }
    auto plan = cache_->plan(seq_, static_cast<int32_t>(prompt.size()), cacheable);
    if (!plan) return std::unexpected(plan.error());
    if (auto r = cache_->commit(seq_, *plan); !r) return r;
    seqTokens_.assign(prompt.begin(), prompt.begin() + seq_.nTokens);
    return {};
}

Result<void> Engine::prefill(std::span<const TokenId> prompt, std::vector<float>& logits, GenerateTimings& timings) {
    if (auto r = reusePrefix(prompt); !r) return r;
    timings.prefixCacheHitTokens = seq_.nTokens;
    timings.prefillTokens = 0;
    for (int32_t start = seq_.nTokens; start < std::ssize(prompt); start += kPrefillChunk) {
        const int32_t n = std::min<int32_t>(kPrefillChunk, static_cast<int32_t>(prompt.size()) - start);
        const bool last = start + n == std::ssize(prompt);
        auto chunk = prompt.subspan(static_cast<size_t>(start), static_cast<size_t>(n));
        if (auto r = model_->forward(*backend_, *cache_, seq_, chunk, last ? std::span<float>(logits) : std::span<float>());
            !r)
            return r;
        seqTokens_.insert(seqTokens_.end(), chunk.begin(), chunk.end());
        cache_->publish(seq_, seqTokens_);
        timings.prefillTokens += n;
    }
    return {};
}

Result<GenerateResult> Engine::generate(const GenerateRequest& request, const TokenCallback& onToken) {
    const auto t0 = Clock::now();
    if (request.prompt.empty()) return fail(ErrorCode::InvalidArgument, "the prompt is empty");
    if (std::ssize(request.prompt) >= contextLength_)
        return fail(ErrorCode::InvalidArgument,
                    strCat("the prompt has ", request.prompt.size(), " tokens; the context holds ", contextLength_));
    if (auto r = validate(request.sampling, config().nVocab); !r) return std::unexpected(r.error());
    GenerateResult result;
    std::vector<float> logits(static_cast<size_t>(config().nVocab));
    if (auto r = prefill(request.prompt, logits, result.timings); !r) return std::unexpected(r.error());
    result.timings.prefillMs = msSince(t0);

    Sampler sampler(request.sampling);
    sampler.observe(request.prompt);  // the penalties look back over the prompt too
    Utf8Stream utf8;
    Clock::time_point tFirst;
    for (int32_t i = 0;; ++i) {
        if (i >= request.maxTokens) { result.finishReason = FinishReason::Length; break; }
        const TokenId id = sampler.sample(logits);
        result.tokens.push_back(id);
        if (request.nTopLogits > 0) result.topLogits.push_back(topLogits(logits, request.nTopLogits));
        if (i == 0) {
            tFirst = Clock::now();
            result.timings.ttftMs = msSince(t0);
        }
        const bool eog = tokenizer_->isEndOfGeneration(id);
        std::string text = eog ? utf8.flush() : utf8.push(tokenizer_->tokenBytes(id));
        if (!onToken(id, text)) { result.finishReason = FinishReason::Stop; break; }
        if (eog) { result.finishReason = FinishReason::Eos; break; }
        if (seq_.nTokens + 1 >= contextLength_) { result.finishReason = FinishReason::Context; break; }
        if (i + 1 >= request.maxTokens) { result.finishReason = FinishReason::Length; break; }
        const TokenId one[1] = {id};
        if (auto r = model_->forward(*backend_, *cache_, seq_, one, logits); !r) return std::unexpected(r.error());
        seqTokens_.push_back(id);
        cache_->publish(seq_, seqTokens_);
    }
    if (const std::string tail = utf8.flush(); !tail.empty() && result.finishReason != FinishReason::Eos)
        onToken(-1, tail);
    result.timings.decodeTokens = std::max<int32_t>(0, static_cast<int32_t>(result.tokens.size()) - 1);
    if (!result.tokens.empty()) result.timings.decodeMs = std::chrono::duration<double, std::milli>(Clock::now() - tFirst).count();
    return result;
}

}  // namespace hearth
