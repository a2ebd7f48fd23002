// Making a session for a request's options (the drafter it names), and the pool of idle ones.
#include "engine/spec/spec_session.h"

#include "engine/spec/draft_model_drafter.h"
#include "engine/spec/history_drafter.h"
#include "engine/spec/mixed_drafter.h"
#include "engine/str_cat.h"

namespace hearth {

Result<std::unique_ptr<SpecSession>> SpecSession::create(const SpecOptions& options, const Tokenizer& targetVocab,
                                                         int32_t targetNVocab, Backend& backend, int32_t contextLength,
                                                         const SuffixIndex* history) {
    if (options.drafter == SpecDrafter::Off) return fail(ErrorCode::InvalidArgument, "speculative decoding is off");
    if (options.maxDraft < 1 || options.maxDraft > kMaxDraftLimit)
        return fail(ErrorCode::InvalidArgument, strCat("the maximum draft length must be 1..", kMaxDraftLimit));
    if (options.ngramMin < 1 || options.ngramMax < options.ngramMin)
        return fail(ErrorCode::InvalidArgument, "n-gram lengths must satisfy 1 <= min <= max");
    std::unique_ptr<Drafter> drafter;
    if (options.drafter == SpecDrafter::DraftModel) {
        auto d = DraftModelDrafter::load(options.draftModelPath, targetVocab, targetNVocab, backend, contextLength);
        if (!d) return std::unexpected(d.error());
        drafter = std::move(*d);
    } else if (options.drafter == SpecDrafter::History) {
        if (!history) return fail(ErrorCode::InvalidArgument, "history drafting needs the engine's history index");
        drafter = std::make_unique<HistoryDrafter>(*history, HistoryDraftConfig{.minMatch = options.ngramMin});
    } else if (options.drafter == SpecDrafter::Auto) {
        drafter = std::make_unique<MixedDrafter>(options.ngramMin, options.ngramMax, history);
    } else {
        drafter = std::make_unique<NGramDrafter>(options.ngramMin, options.ngramMax);
    }
    SpecPolicyConfig policy;
    policy.maxDraft = options.maxDraft;
    policy.allowSwitchOff = options.allowSwitchOff;
    if (options.tree) {
        if (options.maxTreeNodes < options.maxDraft || options.maxTreeNodes > kMaxDraftLimit)
            return fail(ErrorCode::InvalidArgument,
                        strCat("the most tree nodes must be from the maximum draft length to ", kMaxDraftLimit));
        policy.maxTreeNodes = options.maxTreeNodes;
    }
    return std::unique_ptr<SpecSession>(new SpecSession{options, std::move(drafter), SpecPolicy(policy),
                                                        NGramDrafter(options.ngramMin, options.ngramMax), verifyDraft,
                                                        hearth::verifyTree});
}

Result<std::unique_ptr<SpecSession>> SpecSessionPool::take(const SpecOptions& options) {
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
        if ((*it)->options != options) continue;
        std::unique_ptr<SpecSession> s = std::move(*it);
        idle_.erase(std::next(it).base());
        return s;
    }
    return SpecSession::create(options, vocab_, nVocab_, backend_, contextLength_, history_);
}

void SpecSessionPool::put(std::unique_ptr<SpecSession> session) {
    if (!session) return;
    idle_.push_back(std::move(session));
    if (idle_.size() > kMaxIdle) idle_.erase(idle_.begin());
}

}  // namespace hearth
