// Engine facade: wires GGUF, tokenizer, model, backend, KV cache and the requests in flight;
// generate() as a loop over submit()/step().
#include "engine/str_cat.h"
#include "engine/engine.h"

#include <algorithm>

#include "engine/engine_requests.h"
#include "engine/model/gguf.h"
#include "engine/util/sha256.h"

namespace hearth {
namespace {

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

}  // namespace

const char* finishReasonName(FinishReason r) {
    switch (r) {
    case FinishReason::Eos: return "eos";
    case FinishReason::Length: return "length";
    case FinishReason::Stop: return "stop";
    case FinishReason::Context: return "context";
    case FinishReason::Timeout: return "timeout";
    case FinishReason::Cancelled: return "cancelled";
    case FinishReason::Error: return "error";
    }
    return "length";
}

Engine::Engine() = default;
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
    e->requests_ = std::make_unique<EngineRequests>(*e->model_, *e->backend_, *e->cache_, *e->tokenizer_,
                                                    e->contextLength_, options.scheduler);
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

Result<RequestId> Engine::submit(GenerateRequest request) {
    if (request.prompt.empty()) return fail(ErrorCode::InvalidArgument, "the prompt is empty");
    if (std::ssize(request.prompt) >= contextLength_)
        return fail(ErrorCode::InvalidArgument,
                    strCat("the prompt has ", request.prompt.size(), " tokens; the context holds ", contextLength_));
    for (TokenId id : request.prompt)
        if (id < 0 || id >= config().nVocab)
            return fail(ErrorCode::InvalidArgument, strCat("token id ", id, " outside the vocabulary"));
    if (auto r = validate(request.sampling, config().nVocab); !r) return std::unexpected(r.error());
    if (request.timeoutMs < 0) return fail(ErrorCode::InvalidArgument, "the time limit must be >= 0 ms");
    return requests_->submit(std::move(request));
}

std::vector<EngineEvent> Engine::step() { return requests_->step(); }

void Engine::cancel(RequestId id) { requests_->cancel(id, FinishReason::Cancelled); }

bool Engine::idle() const { return requests_->idle(); }

EngineMetrics Engine::metrics() const {
    const BlockPool& pool = cache_->pool();
    return {pool.nUsed(), pool.nFree(), pool.nCached(), pool.nBlocks(), requests_->scheduler().nRunning(),
            requests_->scheduler().nWaiting(), requests_->scheduler().nPreemptionsTotal()};
}

// A loop over submit()/step(): callers that want one reply with a callback keep this shape.
Result<GenerateResult> Engine::generate(const GenerateRequest& request, const TokenCallback& onToken) {
    auto id = submit(request);
    if (!id) return std::unexpected(id.error());
    GenerateResult result;
    while (true) {
        std::vector<EngineEvent> events = step();
        if (events.empty() && requests_->idle())
            return fail(ErrorCode::InvalidArgument, "the request ended without a finish event");
        for (EngineEvent& e : events) {
            if (e.request != *id) continue;
            if (e.kind == EngineEvent::Kind::Token) {
                result.tokens.push_back(e.token);
                if (request.nTopLogits > 0) result.topLogits.push_back(std::move(e.topLogits));
                if (!onToken(e.token, e.text)) requests_->cancel(*id, FinishReason::Stop);
                continue;
            }
            if (!e.text.empty()) onToken(-1, e.text);
            if (e.error) return std::unexpected(*e.error);
            result.finishReason = e.reason;
            result.timings = e.timings;
            return result;
        }
    }
}

}  // namespace hearth
