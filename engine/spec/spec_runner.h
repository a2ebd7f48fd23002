// Speculative generation of one request on a model: prefill the prompt (reusing cached
// blocks), then steps of draft -> one target forward over [last token, drafts] with every
// row's logits -> verify -> roll the rejected positions back out of the KV cache.
// SpecSession is what an Engine keeps between requests: the drafter (a draft model stays
// loaded) and the policy (off stays off until the text turns repetitive).
// Thread-safety: engine thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/kv/kv_cache.h"
#include "engine/model/model.h"
#include "engine/spec/drafter.h"
#include "engine/spec/ngram_drafter.h"
#include "engine/spec/spec_options.h"
#include "engine/spec/spec_policy.h"
#include "engine/spec/verifier.h"

namespace hearth {

class Tokenizer;

struct SpecSession {
    SpecOptions options;
    std::unique_ptr<Drafter> drafter;
    SpecPolicy policy;
    NGramDrafter guesser;  // the policy's repetition check while off
    // The verifier (tests swap in a wrong one as a negative control).
    VerifyOutcome (*verify)(std::span<const float>, int32_t, const Draft&, SpecSampler&) = verifyDraft;

    // Errors: those of DraftModelDrafter::load; InvalidArgument (maxDraft, n-gram lengths).
    static Result<std::unique_ptr<SpecSession>> create(const SpecOptions& options, const Tokenizer& targetVocab,
                                                       int32_t targetNVocab, Backend& backend, int32_t contextLength);
};

// Called with each output token in order; false stops generation (end of generation, a stop
// string, the length limit: the caller decides).
using SpecTokenSink = std::function<bool(int32_t token)>;

struct SpecRunInput {
    std::span<const int32_t> prompt;  // non-empty, shorter than contextLength
    int32_t maxTokens = 0;            // the runner never drafts past it
    int32_t contextLength = 0;        // positions the sequence may use
};

// Runs until sink returns false or maxTokens / the context is reached. The sequence's KV is
// published (whole blocks stay cached for later prompts) and released at the end.
// Errors: OutOfMemory (KV cache), those of Model::forward and the drafter.
Result<SpecStats> runSpeculative(Model& model, Backend& backend, KvCache& cache, const SpecRunInput& input,
                                 SpecSampler& sampler, SpecSession& session, const SpecTokenSink& sink);

}  // namespace hearth
