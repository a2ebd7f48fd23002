// DraftModelDrafter: a second, smaller model with the target's vocabulary drafts tokens one
// decode step at a time. Its own KV cache holds one sequence kept in step with the target's:
// each proposal first rolls back to the longest prefix shared with the new context (what the
// verifier rejected goes) and computes the tokens it has not seen.
// Thread-safety: engine thread only.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/kv/kv_cache.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "engine/spec/drafter.h"
#include "engine/tokenizer/tokenizer.h"

namespace hearth {

class DraftModelDrafter final : public Drafter {
public:
    // Errors: those of GgufFile::open, Model::load, Tokenizer::fromGguf and KvCache::create;
    // InvalidArgument when the vocabularies differ (size, or the first id whose piece differs).
    // backend must outlive the drafter; contextLength bounds the draft's KV cache.
    static Result<std::unique_ptr<DraftModelDrafter>> load(const std::string& path, const Tokenizer& targetVocab,
                                                           int32_t targetNVocab, Backend& backend,
                                                           int32_t contextLength);
    ~DraftModelDrafter() override;

    Result<Draft> propose(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler& sampler) override;
    // Greedy requests: the chain propose() drafts, plus at each level where the draft's
    // probability is split (its runner-up has at least kBranchProb) the runner-up as a leaf
    // beside the chain's token, while the tree has room; no extra forward pass. Sampled
    // requests: the chain (the multi-draft verifier needs siblings drawn from q).
    Result<DraftTree> proposeTree(std::span<const int32_t> context, int32_t maxNodes, int32_t maxDepth,
                                  const SpecSampler& sampler) override;
    static constexpr double kBranchProb = 0.1;
    int32_t nForwards() const override { return nForwards_; }
    // Applied to the draft's logits before the sampler chain (a deliberately different draft
    // for the distribution tests); none by default.
    void setLogitTransform(std::function<void(std::span<float>)> f) { transform_ = std::move(f); }

private:
    explicit DraftModelDrafter(Backend& backend) : backend_(backend) {}
    Result<void> catchUp(std::span<const int32_t> context);
    Result<void> forward(std::span<const int32_t> tokens);
    // The chain, and per drafted token the runner-up with its softmax probability (-1: none).
    Result<Draft> draftChain(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler& sampler,
                             std::vector<TokenProb>* runnersUp);

    Backend& backend_;
    std::unique_ptr<GgufFile> file_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<KvCache> cache_;
    KvSequence seq_;
    std::vector<int32_t> seqTokens_;  // ids of seq_'s positions
    std::vector<float> logits_;  // of the last token fed
    std::function<void(std::span<float>)> transform_;
    int32_t nForwards_ = 0;
    uint64_t nProposals_ = 0;
};

// Ok when both vocabularies hold the same pieces under the same ids; else InvalidArgument
// naming the difference.
Result<void> checkSameVocabulary(const Tokenizer& target, const Tokenizer& draft);

}  // namespace hearth
