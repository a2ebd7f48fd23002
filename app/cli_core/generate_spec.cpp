// hearth-cli generate --spec ngram|auto|draft:PATH [--spec-max N]: speculative decoding
// (Engine::generate with GenerateRequest::spec); --json adds the drafted, accepted and bonus
// counts; without --json they follow the timings on stderr.
#include <algorithm>
#include <cstdio>

#include "app/cli_core/core_commands.h"
#include "app/cli_core/core_common.h"

namespace hearth::cli::core {
namespace {

bool readSpecOptions(const OptionView& p, SpecOptions& spec, std::string& error) {
    const std::string value = p.value("spec");
    if (value == "ngram") {
        spec.drafter = SpecDrafter::NGram;
    } else if (value == "auto") {  // the window's Default (no store here: the context only)
        spec = specAuto(spec.maxDraft);
    } else if (value.starts_with("draft:") && value.size() > 6) {
        spec.drafter = SpecDrafter::DraftModel;
        spec.draftModelPath = value.substr(6);
    } else {
        error = "--spec must be ngram, auto or draft:PATH, not '" + value + "'";
        return false;
    }
    if (!number(p, "spec-max", spec.maxDraft, error)) return false;
    if (spec.maxDraft < 1 || spec.maxDraft > 32) {
        error = "--spec-max must be 1..32";
        return false;
    }
    spec.maxTreeNodes = std::max(spec.maxTreeNodes, spec.maxDraft);
    return true;
}

Json specJson(const SpecStats& s, size_t nTokens) {
    return Json::Object{{"drafted", s.drafted},
                        {"accepted", s.accepted},
                        {"rejected", s.rejected},
                        {"bonus", s.bonus},
                        {"rollbacks", s.rollbacks},
                        {"target_forwards", s.targetForwards},
                        {"draft_forwards", s.draftForwards},
                        {"acceptance", s.drafted > 0 ? double(s.accepted) / s.drafted : 0.0},
                        {"forwards_per_token", nTokens > 0 ? double(s.targetForwards) / double(nTokens) : 0.0},
                        {"switched_off", s.switchedOff},
                        {"switched_on", s.switchedOn},
                        {"active_at_end", s.activeAtEnd}};
}

}  // namespace

int runSpecGenerate(const OptionView& p) {
    GenerateRequest req;
    std::string error;
    if (!readSampling(p, req, error) || !readSpecOptions(p, req.spec, error)) return usageError(error);
    const auto tLoad = Clock::now();
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const double loadMs = msSince(tLoad);
    Engine& e = **engine;
    const SpecOptions spec = req.spec;
    if (!readRequest(p, e, req, error)) return failWith({ErrorCode::Io, error});
    req.spec = spec;
    const bool json = p.isSet("json");
    Outcome o;
    auto r = e.generate(req, [&](TokenId, std::string_view text) {
        o.text += text;
        if (!json) writeOut(text);
        return true;
    });
    if (!r) return failWith(r.error());
    o.tokens = r->tokens;
    o.reason = r->finishReason;
    o.timings = r->timings;
    if (json) {
        Json obj = generateJson(req, o, loadMs);
        obj.insert("spec", specJson(r->spec, r->tokens.size()));
        writeOut(obj.compact() + "\n");
        return 0;
    }
    writeOut("\n");
    printStats(o);
    const SpecStats& s = r->spec;
    std::fprintf(stderr,
                 "[speculative: drafted %d, accepted %d, rejected %d, bonus %d; %d target forwards for %zu tokens]\n",
                 s.drafted, s.accepted, s.rejected, s.bonus, s.targetForwards, r->tokens.size());
    return 0;
}

}  // namespace hearth::cli::core
