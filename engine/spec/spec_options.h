// Speculative decoding's settings and counters as plain values: what GenerateRequest carries
// and GenerateResult / EngineEvent::Finish report (engine/engine.h). The machinery is in
// engine/spec/spec_request.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace hearth {

// History: the engine's index of earlier conversations plus the context (history_drafter.h).
// Auto: the window's "Default", the n-gram and history drafters' continuations merged
// (mixed_drafter.h); with specAuto()'s tree and policy.
enum class SpecDrafter { Off, NGram, DraftModel, History, Auto };

struct SpecOptions {
    SpecDrafter drafter = SpecDrafter::Off;
    std::string draftModelPath;  // DraftModel: a GGUF with the target's vocabulary
    int32_t maxDraft = 8;  // most tokens drafted per step (1..32)
    int32_t ngramMin = 2, ngramMax = 4;  // NGram: lengths of the suffix looked up (History: its shortest match)
    // The policy may switch speculation off when it does not pay (the exactness tests turn
    // this off, so that every step drafts).
    bool allowSwitchOff = true;
    // Tree drafting (a drafter's several continuations verified in one pass, engine/spec
    // DraftTree): the policy chooses each step's extra nodes beyond the chain, up to
    // maxTreeNodes in all (linear when extra rows do not pay). CPU backends only: elsewhere
    // the drafts stay a chain. alwaysOn() keeps the tree at its widest.
    bool tree = false;
    int32_t maxTreeNodes = 16;
    // A cost model for the policy instead of the wall clock, when stepCostMs > 0: a step is
    // taken to cost stepCostMs + rowCostMs per row it verifies (1 + tokens drafted). For tests
    // of the policy on a real model, whose decisions must not depend on the host's load.
    double stepCostMs = 0, rowCostMs = 0;
    bool operator==(const SpecOptions&) const = default;
};

// The usual settings of each drafter; switch-off allowed.
inline SpecOptions specNGram(int32_t maxDraft = 8) {
    SpecOptions o;
    o.drafter = SpecDrafter::NGram;
    o.maxDraft = maxDraft;
    return o;
}
inline SpecOptions specDraftModel(std::string path, int32_t maxDraft = 4) {
    SpecOptions o;
    o.drafter = SpecDrafter::DraftModel;
    o.draftModelPath = std::move(path);
    o.maxDraft = maxDraft;
    return o;
}
// The n-gram drafter proposing trees.
inline SpecOptions specNGramTree(int32_t maxDraft = 8, int32_t maxTreeNodes = 16) {
    SpecOptions o = specNGram(maxDraft);
    o.tree = true;
    o.maxTreeNodes = maxTreeNodes;
    return o;
}
inline SpecOptions specHistory(int32_t maxDraft = 8) {
    SpecOptions o;
    o.drafter = SpecDrafter::History;
    o.maxDraft = maxDraft;
    return o;
}
// The window's "Default": n-gram and history continuations as trees, the policy choosing each
// step's width and switching speculation off when it does not pay.
inline SpecOptions specAuto(int32_t maxDraft = 8, int32_t maxTreeNodes = 16) {
    SpecOptions o;
    o.drafter = SpecDrafter::Auto;
    o.maxDraft = maxDraft;
    o.tree = true;
    o.maxTreeNodes = std::max(maxDraft, maxTreeNodes);
    return o;
}
// The same without the policy's switch-off (the exactness tests).
inline SpecOptions alwaysOn(SpecOptions o) {
    o.allowSwitchOff = false;
    return o;
}

struct SpecStats {
    int32_t drafted = 0;  // tokens proposed by the drafter
    int32_t accepted = 0;  // drafted tokens the verifier kept
    int32_t rejected = 0;  // drafted tokens the verifier refused (drafted - accepted)
    int32_t rollbacks = 0;  // verify steps that refused one (and rolled back the KV cache)
    int32_t bonus = 0;  // extra tokens from the last row when every drafted one was kept
    int32_t treeSteps = 0;  // verify steps whose drafts formed a tree (branched)
    int32_t treeGain = 0;  // tokens kept on a branch beyond what the tree's first path alone kept
    int32_t targetForwards = 0;  // target forward passes that chose output tokens (verify or plain)
    int32_t draftForwards = 0;  // draft-model forward passes (0 for n-gram)
    int32_t switchedOff = 0;  // times the policy turned speculation off, and back on
    int32_t switchedOn = 0;
    bool activeAtEnd = true;
    // The policy's latest measurements: a plain step's ms, and ms per output token of the
    // speculative steps of its current window (0 when none yet).
    double plainMsPerToken = 0, specMsPerToken = 0;
};

}  // namespace hearth
