// The exactness check shared by the tiny and model tests: greedy token ids with speculation
// (a given drafter, policy switch-off disabled) against plain decoding, prompt by prompt,
// printing drafted / accepted / rejected counts.
#pragma once

#include <QtTest>

#include <cstdio>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace hearth::test {

inline const char* specLabel(SpecDrafter d) {
    return d == SpecDrafter::NGram  ? "ngram"
        : d == SpecDrafter::History ? "history"
        : d == SpecDrafter::Auto    ? "auto"
                                    : "draft";
}

struct ExactnessTally {
    int prompts = 0, withDrafts = 0, withRejections = 0, mismatches = 0;
    int withTrees = 0;  // runs that verified a branched tree at least once
    int treeGain = 0;  // tokens kept on branches beyond the trees' first paths, all runs
};

// Plain greedy generation of each prompt, then speculative with each of specs; QVERIFY-style
// failures are reported by the caller from the tally.
inline ExactnessTally checkExactness(Engine& e, const std::vector<std::vector<TokenId>>& prompts,
                                     const std::vector<SpecOptions>& specs, int32_t maxTokens, const char* label) {
    ExactnessTally t;
    for (size_t i = 0; i < prompts.size(); ++i) {
        GenerateRequest req;
        req.prompt = prompts[i];
        req.maxTokens = maxTokens;
        req.sampling.temperature = 0.0f;
        const auto ignore = [](TokenId, std::string_view) { return true; };
        auto plain = e.generate(req, ignore);
        if (!plain) QTest::qFail(plain.error().message.c_str(), __FILE__, __LINE__);
        for (const SpecOptions& spec : specs) {
            req.spec = spec;
            auto sp = e.generate(req, ignore);
            if (!sp) QTest::qFail(sp.error().message.c_str(), __FILE__, __LINE__);
            if (!plain || !sp) return t;
            const SpecStats& s = sp->spec;
            const bool same = sp->tokens == plain->tokens;
            std::printf(
                "%s prompt %2zu %-6s: %2zu tokens, drafted %3d accepted %3d rejected %3d (rollbacks %2d) "
                "bonus %2d, forwards %2d, trees %2d gain %2d%s\n",
                label, i,
                spec.tree && spec.drafter != SpecDrafter::Auto ? (spec.drafter == SpecDrafter::NGram ? "tree" : "dtree")
                                                               : specLabel(spec.drafter),
                sp->tokens.size(), s.drafted, s.accepted, s.rejected, s.rollbacks, s.bonus, s.targetForwards,
                s.treeSteps, s.treeGain, same ? "" : "  MISMATCH");
            ++t.prompts;
            t.withDrafts += s.drafted > 0;
            t.withRejections += s.rollbacks > 0;
            t.mismatches += !same;
            t.withTrees += s.treeSteps > 0;
            t.treeGain += s.treeGain;
        }
    }
    std::printf(
        "%s: %d runs, %d mismatches, %d with rejections, %d with branched trees (%d tokens gained on "
        "branches)\n",
        label, t.prompts, t.mismatches, t.withRejections, t.withTrees, t.treeGain);
    std::fflush(stdout);
    return t;
}

}  // namespace hearth::test
