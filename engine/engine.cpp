// Engine facade: wires GGUF, tokenizer, model, backend, KV cache and the requests in flight;
// generate() as a loop over submit()/step().
#include "engine/str_cat.h"
#include "engine/engine.h"

#include <algorithm>
#include <new>

#include "engine/engine_requests.h"
#include "engine/model/gguf.h"
#include "engine/model/layer_placement.h"
#include "engine/spec/suffix_index.h"
#include "engine/util/sha256.h"
#include "kernels/cuda/cuda_backend.h"

namespace hearth {
namespace {

// Bumped whenever a kernel change alters K/V values, so cached KV of older builds is not reused.
// 2: attention with FMA scores, softmaxExp, a float V sum. 3: F32/F16/BF16 dot products in
// float lanes of fused multiply-adds instead of double (ref/quants.h). 4: GeGLU's GELU through
// llama.cpp's F16 table (kernels/cpu/reference/gelu_tanh.h). 5: attention reduced in pieces of
// 256 positions merged in order (kernels/cpu/attention_pieces.h). 6: SwiGLU's sigmoid through
// softmaxExp (reference/softmax_exp.h) instead of the C library's expf.
constexpr uint32_t kNumericsVersion = 6;

// The model's parameters that change K/V values without changing the KV layout: RoPE (base,
// sliding-window base, rotated dimensions, style, frequency factors) and the trained context length.
std::string ropeDescription(const ModelConfig& c) {
    std::string out =
        strCat("rope base=", c.ropeFreqBase, " base_swa=", c.ropeFreqBaseSwa, " n_rot=", c.nRot,
               " style=", static_cast<int>(c.ropeStyle), " window=", c.slidingWindow, " ctx_train=", c.contextLength);
    if (!c.ropeFreqFactors.empty()) {  // the factors' bytes, hashed: a few words instead of 64 numbers
        const std::string_view bytes(reinterpret_cast<const char*>(c.ropeFreqFactors.data()),
                                     c.ropeFreqFactors.size() * sizeof(float));
        out += strCat(" freq_factors=", toHex(sha256(bytes)).substr(0, 16));
    }
    return out;
}

}  // namespace

bool cudaConsidered(EngineOptions::BackendKind kind) {
    using Kind = EngineOptions::BackendKind;
    return kind == Kind::Cuda || (kind == Kind::Best && !cpuRequestedByEnvironment());
}

namespace {

// The backend options ask for. Best takes CUDA where a usable GPU is found (no note when there
// is none: most machines have none) unless HEARTH_BACKEND=cpu; CUDA asked for (Cuda, or
// HEARTH_BACKEND=cuda under Best) that cannot start, or a GPU found whose backend then fails,
// leaves the engine on the best CPU backend with *note saying why.
std::unique_ptr<Backend> chooseBackend(const EngineOptions& options, std::string* note) {
    using Kind = EngineOptions::BackendKind;
    if (options.backend == Kind::Reference) return makeCpuReferenceBackend();
    const bool askCuda =
        options.backend == Kind::Cuda || (options.backend == Kind::Best && cudaRequestedByEnvironment());
    if (cudaConsidered(options.backend) && (askCuda || probeCuda().available)) {
        std::string why;
        if (auto cuda = makeCudaBackend(&why)) return cuda;
        *note = strCat("CUDA is unavailable (", why, "); running on the CPU");
    }
    if (const std::string slow = cpuFallbackNote(); !slow.empty()) *note += (note->empty() ? "" : "; ") + slow;
    return makeBestCpuBackend(options.nThreads);
}

// The chain root: SHA-256 over the file's fingerprint with the RoPE description, the layout,
// the backend and the numerics version (KvChainRoot::derive), and the parts in words.
KvRootInfo kvRootFor(const ModelFingerprint& fp, const ModelConfig& config, const KvLayout& layout,
                     const std::string& backend) {
    const std::string rope = ropeDescription(config);
    std::vector<uint8_t> modelPart(fp.begin(), fp.end());
    modelPart.insert(modelPart.end(), rope.begin(), rope.end());
    KvRootInfo info;
    info.key = KvChainRoot::derive(modelPart, layout, backend, kNumericsVersion).key;
    info.fingerprint = fingerprintHex(fp);
    info.layout = strCat(describe(layout), " ", rope);
    info.backend = backend;
    info.numericsVersion = kNumericsVersion;
    return info;
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

Result<ModelParts> loadModelParts(const GgufFile& file, const ModelLoadOptions& options) {
    ModelParts parts;
    auto model = Model::load(file, options);
    if (!model) return std::unexpected(model.error());
    parts.model = std::move(*model);
    auto tokenizer = Tokenizer::fromGguf(file);
    if (!tokenizer) return std::unexpected(tokenizer.error());
    parts.tokenizer = std::move(*tokenizer);
    const Tokenizer& tok = *parts.tokenizer;
    if (tok.nVocab() > parts.model->config().nVocab)
        return fail(ErrorCode::InvalidFormat,
                    strCat("the vocabulary has ", tok.nVocab(), " tokens but the model's embedding only ",
                           parts.model->config().nVocab));
    const GgufValue* tmpl = file.find("tokenizer.chat_template");
    const auto pieceOf = [&](TokenId id) { return id >= 0 ? tok.pieceText(id) : std::string(); };
    parts.chatFormat = ChatFormat::detect(tmpl && tmpl->asString() ? *tmpl->asString() : std::string(),
                                          parts.model->config().architecture, {pieceOf(tok.bos()), pieceOf(tok.eos())});
    return parts;
}

Engine::Engine() = default;
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::load(const std::string& path, const EngineOptions& options) {
    std::unique_ptr<Engine> e(new Engine());
    auto file = GgufFile::open(path);
    if (!file) return std::unexpected(file.error());
    e->file_ = std::move(*file);
    auto parts = loadModelParts(*e->file_, {.contextLength = std::max(0, options.contextLength)});
    if (!parts) return std::unexpected(parts.error());
    e->model_ = std::move(parts->model);
    e->tokenizer_ = std::move(parts->tokenizer);
    e->chatFormat_ = std::move(parts->chatFormat);
    if (options.contextLength < 0 || options.kvBlockSize <= 0 || options.kvBlockSize > 1024)
        return fail(ErrorCode::InvalidArgument, "context length and KV block size must be positive");
    e->contextLength_ = options.contextLength > 0 ? std::min(options.contextLength, e->config().contextLength)
                                                  : e->config().contextLength;
    e->backend_ = options.makeBackend ? options.makeBackend() : chooseBackend(options, &e->backendNote_);
    const auto layoutFor = [&](const Backend& b) {
        KvLayout l = e->model_->kvLayout(options.kvBlockSize, options.kvWindowPools);
        l.elementType = options.kvType;
        l.kDimMajor = options.kvKDimMajor && options.kvType == KvElementType::F16 && l.blockSize % 8 == 0 &&
            b.prefersDimMajorK();
        if (options.kvVHeadMajor && options.kvType == KvElementType::F16 && b.prefersHeadMajorV())
            l.vHeadDim = e->config().headDim;
        return l;
    };
    KvLayout layout = layoutFor(*e->backend_);
    if (options.kvType == KvElementType::Q8_0 && e->config().headDim % kQK != 0)
        return fail(ErrorCode::Unsupported,
                    strCat("a q8_0 KV cache needs a head size that is a multiple of ", kQK, "; this model's is ",
                           e->config().headDim, " (use --kv-type f16)"));
    ModelFingerprint fingerprint{};
    if (options.modelFingerprint) {
        fingerprint = *options.modelFingerprint;
    } else {
        auto fp = fingerprintFiles(e->file_->partPaths());
        if (!fp) return std::unexpected(fp.error());
        fingerprint = *fp;
    }
    // A backend with memory of its own (the GPU) takes every layer when the model and the KV of
    // its context fit its free memory (HEARTH_CUDA_MEMORY_LIMIT_MB caps it), else as many whole
    // layers as fit with the rest on the CPU, else none. When copying the weights runs out of
    // device memory all the same (the free memory was overestimated: another process took some,
    // or it is fragmented), the model is read again and placed with a quarter fewer layers on the
    // GPU (one fewer at least), down to none.
    int onDevice = e->config().nLayers;
    int maxLayers = -1;  // no cap until a placement did not fit
    size_t budget = 0;
    std::string shortfall;  // the placement that did not fit, for the note
    if (!e->backend_->operatesOnHostMemory()) budget = placementBudget(e->backend_->freeMemory());
    for (;;) {
        if (!e->backend_->operatesOnHostMemory()) {
            const LayerPlacement plan =
                planLayerPlacement(*e->file_, e->config(), layout, e->contextLength_, budget, maxLayers);
            onDevice = plan.onDevice;
            const std::string fit =
                strCat(shortfall, plan.describe(), " (", plan.deviceBytes >> 20, " of ", budget >> 20, " MiB)");
            if (onDevice == 0) {
                e->backendNote_ = shortfall.empty() ? strCat("the model does not fit the GPU's free memory, ",
                                                             budget >> 20, " MiB: running on the CPU")
                                                      : strCat(shortfall, "running on the CPU");
                e->backend_ = makeBestCpuBackend(options.nThreads);
                layout = layoutFor(*e->backend_);
                onDevice = e->config().nLayers;
            } else if (!plan.all()) {
                e->hostBackend_ = makeBestCpuBackend(options.nThreads);
                e->model_->splitLayers(e->hostBackend_.get(), onDevice);
                e->backendNote_ = strCat(fit, ", the rest on ", e->hostBackend_->name());
            } else {
                e->backendNote_ = fit;
            }
        }
        // After the fingerprint, whose hashing maps the whole file: the repacked copy and the
        // fingerprint's mapping are never resident together.
        try {  // a CUDA error while copying the weights to the GPU is an error value, not an abort
            if (e->packWeights(fingerprint, options)) break;
        } catch (const std::exception& ex) {
            return fail(ErrorCode::Device,
                        strCat(e->backend_->name(), " could not take the model's weights (", ex.what(),
                               "); HEARTH_CUDA_MEMORY_LIMIT_MB=N places fewer layers on the GPU"));
        }
        shortfall = strCat("out of GPU memory at load with ", onDevice, " of ", e->config().nLayers, " layers; ");
        maxLayers = onDevice - std::max(1, onDevice / 4);
        e->hostBackend_.reset();
        e->model_.reset();  // frees its copies on the device before the next try makes new ones
        auto again = Model::load(*e->file_, {.contextLength = std::max(0, options.contextLength)});
        if (!again) return std::unexpected(again.error());
        e->model_ = std::move(*again);
    }
    // The placement is part of the chain root: KV saved under one split is refused under another.
    e->kvRoot_ = kvRootFor(fingerprint, e->config(), layout,
                           e->hostBackend_ ? strCat(e->backend_->name(), " layers 0-", onDevice - 1, " + ",
                                                    e->hostBackend_->name())
                                           : e->backend_->name());
    const KvChainRoot root{e->kvRoot_.key};
    auto cache = KvCache::create(layout, e->contextLength_, root);
    if (!cache) return std::unexpected(cache.error());
    e->cache_ = std::move(*cache);
    if (!e->backend_->operatesOnHostMemory())  // KV where it computes (the device layers' only when split)
        e->cache_->placeOn(e->backend_.get(), e->hostBackend_ ? onDevice : -1);
    e->requests_ = std::make_unique<EngineRequests>(*e->model_, *e->backend_, *e->cache_, *e->tokenizer_,
                                                    e->contextLength_, options.scheduler);
    e->history_ = std::make_unique<SuffixIndex>(SuffixIndexConfig{.capTokens = options.historyCapTokens});
    e->requests_->specSessions().setHistory(e->history_.get());
    return e;
}

// The backend's layout of the weights, through the disk cache unless it is switched off.
bool Engine::packWeights(const ModelFingerprint& fingerprint, const EngineOptions& options) {
    using Outcome = PackCacheReport::Outcome;
    // A backend with memory of its own reads its matrices only from their copies: always made.
    if (!options.packWeights && backend_->operatesOnHostMemory()) return true;  // packCache_.outcome stays NotPacked
    // A backend with memory of its own copies the weights there: nothing a disk cache could hold.
    if (!options.packCache || !packCacheEnabledByEnvironment() || !backend_->operatesOnHostMemory()) {
        packCache_.outcome = Outcome::Off;
        try {
            packCache_.packedBytes = model_->packWeights(*backend_, options.loadProgress);
        } catch (const std::bad_alloc&) {
            if (backend_->operatesOnHostMemory()) throw;
            return false;  // the device's memory, not the host's
        }
        if (hostBackend_) packCache_.packedBytes += model_->packWeights(*hostBackend_, options.loadProgress);
        return true;
    }
    PackCacheConfig config;
    config.dir = options.packCacheDir.empty() ? defaultPackCacheDir() : options.packCacheDir;
    PackCacheResult r = packWithCache(*model_, *backend_, fingerprint, config, options.loadProgress);
    packCache_ = std::move(r.report);
    packMapping_ = std::move(r.mapping);
    packWrite_ = std::move(r.write);
    return true;
}

std::vector<TokenId> Engine::chatPrompt(const std::vector<ChatMessage>& messages, const RenderOptions& options) const {
    const std::vector<TextSegment> segments = chatFormat_.render(messages, options);
    std::vector<TokenId> ids = tokenizer_->encode(segments, false);
    const bool startsWithBos = !ids.empty() && ids.front() == tokenizer_->bos();
    if (tokenizer_->addBosByDefault() && tokenizer_->bos() >= 0 && !startsWithBos)
        ids.insert(ids.begin(), tokenizer_->bos());
    return ids;
}

std::vector<TokenId> Engine::rawPrompt(std::string_view text) const {
    return tokenizer_->encode(text, tokenizer_->addBosByDefault(), false);
}

Result<void> Engine::validatePrompt(const std::vector<TokenId>& prompt) const {
    if (prompt.empty()) return fail(ErrorCode::InvalidArgument, "the prompt is empty");
    if (std::ssize(prompt) >= contextLength_)
        return fail(ErrorCode::InvalidArgument,
                    strCat("the prompt has ", prompt.size(), " tokens; the context holds ", contextLength_));
    for (TokenId id : prompt)
        if (id < 0 || id >= config().nVocab)
            return fail(ErrorCode::InvalidArgument, strCat("token id ", id, " outside the vocabulary"));
    return {};
}

Result<RequestId> Engine::submit(GenerateRequest request) {
    if (auto r = validatePrompt(request.prompt); !r) return std::unexpected(r.error());
    if (auto r = validate(request.sampling, config().nVocab); !r) return std::unexpected(r.error());
    if (request.timeoutMs < 0) return fail(ErrorCode::InvalidArgument, "the time limit must be >= 0 ms");
    return requests_->submit(std::move(request));
}

std::vector<EngineEvent> Engine::step() { return requests_->step(); }

std::vector<BlockKey> Engine::kvChainKeys(std::span<const TokenId> tokens) const {
    return hearth::kvChainKeys(cache_->root(), kvBlockSize(), tokens);
}

std::vector<KvBlockRecord> Engine::exportKv(std::span<const TokenId> tokens,
                                            const std::function<bool(const BlockKey&)>& skip) const {
    const Scheduler& sched = requests_->scheduler();
    return exportKvBlocks(*cache_, tokens, skip, sched.parkedKv(), sched.parkedTokens());
}

KvImportResult Engine::importKv(const KvRootInfo& saved, std::span<const KvBlockRecord> records,
                                std::span<const TokenId> tokens) {
    KvImportResult r = importKvBlocks(*cache_, kvRoot_, saved, records, tokens);
    if (r.tailRecord < 0) return r;
    // The partial last block becomes the parked sequence the next request continues, unless the
    // engine's own parked sequence already holds as much of tokens: the scheduler's choice.
    const auto covered = static_cast<size_t>(r.nTokens + r.tailRows);
    const Result<bool> parked = requests_->scheduler().parkRestored(tokens.first(covered), [&] {
        return restoreKvTail(*cache_, tokens, r.nBlocks, records[static_cast<size_t>(r.tailRecord)], r.tailRows);
    });
    if (!parked) {
        r.refusal = "the partial KV block was not restored: " + parked.error().message;
        r.refusalKind = KvRefusal::Block;
    }
    if (!parked || !*parked) r.tailRows = 0;  // refused, or held already: nothing copied
    return r;
}

void Engine::cancel(RequestId id) { requests_->cancel(id, FinishReason::Cancelled); }

void Engine::addHistory(std::span<const TokenId> tokens) { history_->add(tokens); }

void Engine::clearHistory() { history_->clear(); }

void Engine::resetSpeculation() { requests_->specSessions().clear(); }

bool Engine::idle() const { return requests_->idle(); }

Result<BeamSearchResult> Engine::beamSearch(const std::vector<TokenId>& prompt, BeamSearchParams params) {
    if (auto r = validatePrompt(prompt); !r) return std::unexpected(r.error());
    if (!idle()) return fail(ErrorCode::InvalidArgument, "beam search needs an engine with no request in flight");
    SamplingParams scoring;  // the options beam search honours, checked as the sampler's are
    scoring.logitBias = params.logitBias;
    scoring.repeatPenalty = params.repeatPenalty;
    scoring.repeatLastN = params.repeatLastN;
    scoring.presencePenalty = params.presencePenalty;
    scoring.frequencyPenalty = params.frequencyPenalty;
    if (auto r = validate(scoring, tokenizer_->nVocab()); !r) return std::unexpected(r.error());
    const int32_t room = contextLength_ - static_cast<int32_t>(prompt.size());
    params.maxTokensIsContext = room < params.maxTokens;
    params.maxTokens = std::min(params.maxTokens, room);
    params.decode = [this](std::span<const int32_t> ids) { return tokenizer_->decode(ids); };
    params.endTokens.clear();
    for (TokenId id = 0; id < tokenizer_->nVocab(); ++id)
        if (tokenizer_->isEndOfGeneration(id)) params.endTokens.push_back(id);
    return runBeamSearch(*model_, *backend_, *cache_, prompt, params);
}

EngineMetrics Engine::metrics() const {
    const BlockPool& pool = cache_->pool();
    EngineMetrics m{pool.nUsed(),
                    pool.nFree(),
                    pool.nCached(),
                    pool.nBlocks(),
                    requests_->scheduler().nRunning(),
                    requests_->scheduler().nWaiting(),
                    requests_->scheduler().nPreemptionsTotal()};
    if (cache_->nGroups() > 1) {
        const BlockPool& window = cache_->pool(1);
        m.windowBlocksUsed = window.nUsed();
        m.windowBlocksFree = window.nFree();
        m.windowBlocksCached = window.nCached();
        m.windowBlocksTotal = window.nBlocks();
    }
    return m;
}

// A loop over submit()/step() (speculative or not): callers that want one reply with a
// callback keep this shape.
Result<GenerateResult> Engine::generate(const GenerateRequest& request, const TokenCallback& onToken) {
    auto id = submit(request);
    if (!id) return std::unexpected(id.error());
    GenerateResult result;
    bool stopped = false;  // the callback said stop: later tokens of the same step are dropped
    while (true) {
        std::vector<EngineEvent> events = step();
        if (events.empty() && requests_->idle())
            return fail(ErrorCode::InvalidArgument, "the request ended without a finish event");
        for (EngineEvent& e : events) {
            if (e.request != *id) continue;
            if (e.kind == EngineEvent::Kind::Token) {
                if (stopped) continue;
                result.tokens.push_back(e.token);
                if (request.nTopLogits > 0) result.topLogits.push_back(std::move(e.topLogits));
                stopped = !onToken(e.token, e.text);
                if (stopped) requests_->cancel(*id, FinishReason::Stop);
                continue;
            }
            if (!e.text.empty()) onToken(-1, e.text);
            if (e.error) return std::unexpected(*e.error);
            result.finishReason = e.reason;
            result.timings = e.timings;
            result.spec = e.spec;
            return result;
        }
    }
}

}  // namespace hearth
