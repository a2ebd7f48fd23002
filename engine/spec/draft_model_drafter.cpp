// Loading with the vocabulary check, catching up with the target's sequence, and drafting one
// token per forward pass with the request's sampler chain (its own seed).
#include "engine/spec/draft_model_drafter.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/str_cat.h"

namespace hearth {

Result<void> checkSameVocabulary(const Tokenizer& target, const Tokenizer& draft) {
    if (target.nVocab() != draft.nVocab())
        return fail(ErrorCode::InvalidArgument,
                    strCat("the draft model's vocabulary has ", draft.nVocab(), " tokens, the target's ",
                           target.nVocab(), "; they must be the same"));
    for (int32_t id = 0; id < target.nVocab(); ++id)
        if (target.pieceText(id) != draft.pieceText(id))
            return fail(ErrorCode::InvalidArgument,
                        strCat("the draft model's vocabulary differs from the target's at token ", id, " ('",
                               draft.pieceText(id), "' vs '", target.pieceText(id), "')"));
    return {};
}

Result<std::unique_ptr<DraftModelDrafter>> DraftModelDrafter::load(const std::string& path,
                                                                   const Tokenizer& targetVocab, int32_t targetNVocab,
                                                                   Backend& backend, int32_t contextLength) {
    std::unique_ptr<DraftModelDrafter> d(new DraftModelDrafter(backend));
    auto file = GgufFile::open(path);
    if (!file) return std::unexpected(file.error());
    d->file_ = std::move(*file);
    auto vocab = Tokenizer::fromGguf(*d->file_);
    if (!vocab) return std::unexpected(vocab.error());
    if (auto r = checkSameVocabulary(targetVocab, **vocab); !r) return std::unexpected(r.error());
    auto model = Model::load(*d->file_, {.contextLength = contextLength});
    if (!model) return std::unexpected(model.error());
    d->model_ = std::move(*model);
    if (d->model_->config().nVocab != targetNVocab)
        return fail(ErrorCode::InvalidArgument,
                    strCat("the draft model has ", d->model_->config().nVocab, " output rows, the target ",
                           targetNVocab, "; they must be the same"));
    auto cache = KvCache::create(d->model_->kvLayout(), std::min(contextLength, d->model_->config().contextLength));
    if (!cache) return std::unexpected(cache.error());
    d->cache_ = std::move(*cache);
    return d;
}

DraftModelDrafter::~DraftModelDrafter() {
    if (cache_) cache_->release(seq_);
}

Result<void> DraftModelDrafter::forward(std::span<const int32_t> tokens) {
    logits_.resize(static_cast<size_t>(model_->config().nVocab));
    ++nForwards_;
    if (auto r = model_->forward(backend_, *cache_, seq_, tokens, logits_); !r) return r;
    seqTokens_.insert(seqTokens_.end(), tokens.begin(), tokens.end());
    if (transform_) transform_(logits_);
    return {};
}

// Keeps the longest common prefix (but never the last context token: its logits are needed)
// and computes the rest of context.
Result<void> DraftModelDrafter::catchUp(std::span<const int32_t> context) {
    const auto mismatch = std::mismatch(seqTokens_.begin(), seqTokens_.end(), context.begin(), context.end());
    const auto common = std::min<int64_t>(mismatch.first - seqTokens_.begin(), std::ssize(context) - 1);
    cache_->rollback(seq_, static_cast<int32_t>(common));
    if (!cache_->resumable(seq_)) cache_->release(seq_);  // a sliding window's released blocks: start over
    seqTokens_.resize(static_cast<size_t>(seq_.nTokens));
    if (std::ssize(context) >= cache_->capacityTokens())
        return fail(ErrorCode::OutOfMemory, "the draft model's context is full");
    return forward(context.subspan(static_cast<size_t>(seq_.nTokens)));
}

namespace {

// The runner-up of logits under a softmax (temperature 1): its id and probability.
TokenProb runnerUp(std::span<const float> logits, int32_t best) {
    float top = -std::numeric_limits<float>::infinity();
    for (const float l : logits) top = std::max(top, l);
    double sum = 0;
    TokenProb second{-1, 0.0};
    float secondLogit = -std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < logits.size(); ++i) {
        sum += std::exp(static_cast<double>(logits[i] - top));
        if (static_cast<int32_t>(i) != best && logits[i] > secondLogit) {
            secondLogit = logits[i];
            second.id = static_cast<int32_t>(i);
        }
    }
    if (second.id >= 0) second.p = std::exp(static_cast<double>(secondLogit - top)) / sum;
    return second;
}

}  // namespace

Result<Draft> DraftModelDrafter::draftChain(std::span<const int32_t> context, int32_t maxTokens,
                                            const SpecSampler& sampler, std::vector<TokenProb>* runnersUp) {
    Draft draft;
    if (maxTokens <= 0 || context.empty()) return draft;
    if (auto r = catchUp(context); !r) return std::unexpected(r.error());
    SpecSampler local = sampler;
    local.reseed(sampler.params().seed * 0x9E3779B97F4A7C15ull + ++nProposals_);
    const auto room = static_cast<int32_t>(cache_->capacityTokens() - std::ssize(context));
    const int32_t n = std::min(maxTokens, room);
    for (int32_t i = 0; i < n; ++i) {
        int32_t token;
        if (local.greedy()) {
            token = local.greedyToken(logits_);
            if (runnersUp) runnersUp->push_back(runnerUp(logits_, token));
        } else {
            std::vector<TokenProb> q = local.distribution(logits_);
            token = local.draw(q);
            draft.q.push_back(std::move(q));
        }
        local.push(token);
        draft.tokens.push_back(token);
        if (i + 1 < n)
            if (auto r = forward(std::span<const int32_t>(&token, 1)); !r) return std::unexpected(r.error());
    }
    return draft;
}

Result<Draft> DraftModelDrafter::propose(std::span<const int32_t> context, int32_t maxTokens,
                                         const SpecSampler& sampler) {
    return draftChain(context, maxTokens, sampler, nullptr);
}

Result<DraftTree> DraftModelDrafter::proposeTree(std::span<const int32_t> context, int32_t maxNodes, int32_t maxDepth,
                                                 const SpecSampler& sampler) {
    std::vector<TokenProb> alternatives;
    auto chain = draftChain(context, std::min(maxNodes, maxDepth), sampler, sampler.greedy() ? &alternatives : nullptr);
    if (!chain) return std::unexpected(chain.error());
    if (!sampler.greedy()) return DraftTree::fromChain(*chain);
    // The chain's nodes first (node i its i-th token, the first path), then the runners-up.
    DraftTree t = DraftTree::fromChain(*chain);
    for (size_t i = 0; i < alternatives.size() && std::ssize(t.tokens) < maxNodes; ++i) {
        const TokenProb& alt = alternatives[i];
        if (alt.id < 0 || alt.p < kBranchProb || alt.id == chain->tokens[i]) continue;
        t.tokens.push_back(alt.id);
        t.parents.push_back(static_cast<int32_t>(i) - 1);
        t.score.push_back(alt.p);
    }
    return t;
}

}  // namespace hearth
