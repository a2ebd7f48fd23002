// SpecSession: what one speculating request uses and what outlives it — the drafter (a draft
// model stays loaded, with its own KV sequence) and the policy (off stays off until the text
// turns repetitive). SpecSessionPool keeps idle sessions so that the next request with the
// same options takes one up again instead of loading a draft model anew.
// Thread-safety: engine thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/spec/drafter.h"
#include "engine/spec/ngram_drafter.h"
#include "engine/spec/spec_options.h"
#include "engine/spec/spec_policy.h"
#include "engine/spec/verifier.h"

namespace hearth {

class Backend;
class SuffixIndex;
class Tokenizer;

struct SpecSession {
    SpecOptions options;
    std::unique_ptr<Drafter> drafter;
    SpecPolicy policy;
    NGramDrafter guesser;  // the policy's repetition check while off
    // The verifier (tests swap in a wrong one as a negative control).
    VerifyOutcome (*verify)(const TargetRows&, const Draft&, SpecSampler&) = verifyDraft;
    VerifyOutcome (*verifyTree)(const TargetRows&, const DraftTree&, SpecSampler&) = hearth::verifyTree;

    // history: the engine's index, for SpecDrafter::History and Auto (it must outlive the session).
    // Errors: those of DraftModelDrafter::load; InvalidArgument (maxDraft, n-gram lengths, History
    // without an index).
    static Result<std::unique_ptr<SpecSession>> create(const SpecOptions& options, const Tokenizer& targetVocab,
                                                       int32_t targetNVocab, Backend& backend, int32_t contextLength,
                                                       const SuffixIndex* history = nullptr);
};

constexpr int32_t kMaxDraftLimit = 32;  // SpecOptions::maxDraft's upper bound

class SpecSessionPool {
public:
    // All three must outlive the pool.
    SpecSessionPool(const Tokenizer& targetVocab, int32_t targetNVocab, Backend& backend, int32_t contextLength)
        : vocab_(targetVocab), nVocab_(targetNVocab), backend_(backend), contextLength_(contextLength) {}

    // An idle session made for the same options (the most recently returned), else a new one.
    // Errors: those of SpecSession::create.
    Result<std::unique_ptr<SpecSession>> take(const SpecOptions& options);
    // Back to the pool; the oldest idle sessions beyond kMaxIdle are dropped.
    void put(std::unique_ptr<SpecSession> session);
    void clear() { idle_.clear(); }
    // The index History sessions draft from (the engine's; must outlive the pool).
    void setHistory(const SuffixIndex* history) { history_ = history; }
    static constexpr size_t kMaxIdle = 4;

private:
    const Tokenizer& vocab_;
    int32_t nVocab_;
    Backend& backend_;
    int32_t contextLength_;
    const SuffixIndex* history_ = nullptr;
    std::vector<std::unique_ptr<SpecSession>> idle_;  // oldest first
};

}  // namespace hearth
