// hearth-cli generate --beams K: beam search (Engine::beamSearch) instead of sampling; prints
// the best hypothesis, or with --json all finished hypotheses, best first. Logit bias, the
// penalties, stop strings and --timeout-ms apply; sampling-only options are refused.
#include <cstdio>

#include "app/cli_core/core_commands.h"
#include "app/cli_core/core_common.h"

namespace hearth::cli::core {
namespace {

Json beamJson(const GenerateRequest& req, const BeamSearchParams& params, const BeamSearchResult& r, double loadMs) {
    const BeamHypothesis& best = r.hypotheses.front();
    Json::Array hypotheses;
    for (const BeamHypothesis& h : r.hypotheses)
        hypotheses.push_back(Json::Object{{"tokens", toJson(h.tokens)},
                                          {"text", h.text},
                                          {"log_prob", h.logProb},
                                          {"score", h.score},
                                          {"finish_reason", beamEndName(h.end)}});
    return Json::Object{{"prompt_tokens", toJson(req.prompt)},
                        {"tokens", toJson(best.tokens)},
                        {"text", best.text},
                        {"finish_reason", beamEndName(best.end)},
                        {"beams", params.nBeams},
                        {"beam_length_norm", params.lengthNormAlpha},
                        {"log_prob", best.logProb},
                        {"score", best.score},
                        {"hypotheses", hypotheses},
                        {"computed_tokens", r.nForwardTokens},
                        {"forward_passes", r.nForwardPasses},
                        {"peak_kv_blocks", r.peakBlocksUsed},
                        {"load_ms", loadMs}};
}

// Sampling options that mean nothing to a search: set to anything but their default, refused.
bool refuseSamplingOptions(const OptionView& p, const GenerateRequest& req, std::string& error) {
    const SamplingParams def;
    const SamplingParams& s = req.sampling;
    const std::pair<const char*, bool> changed[] = {
        {"temp", s.temperature != def.temperature},
        {"top-k", s.topK != def.topK},
        {"top-p", s.topP != def.topP},
        {"min-p", s.minP != def.minP},
        {"typical-p", s.typicalP != def.typicalP},
        {"seed", s.seed != def.seed},
        {"top-logits", req.nTopLogits != 0},
    };
    for (const auto& [name, differs] : changed)
        if (p.isSet(name) && differs) {
            error = "--" + std::string(name) + " has no meaning for beam search (--beams); leave it out";
            return false;
        }
    return true;
}

bool readBeamParams(const OptionView& p, const GenerateRequest& req, BeamSearchParams& params, std::string& error) {
    if (!number(p, "beams", params.nBeams, error) || !number(p, "beam-length-norm", params.lengthNormAlpha, error))
        return false;
    if (params.nBeams < 1 || params.lengthNormAlpha < 0 || req.maxTokens < 1) {
        error = "--beams and --max-tokens must be >= 1, --beam-length-norm >= 0";
        return false;
    }
    if (!refuseSamplingOptions(p, req, error)) return false;
    const SamplingParams& s = req.sampling;
    params.maxTokens = req.maxTokens;
    params.logitBias = s.logitBias;
    params.repeatPenalty = s.repeatPenalty;
    params.repeatLastN = s.repeatLastN;
    params.presencePenalty = s.presencePenalty;
    params.frequencyPenalty = s.frequencyPenalty;
    params.stop = req.stop;
    params.timeoutMs = req.timeoutMs;
    return true;
}

}  // namespace

int runBeamGenerate(const OptionView& p) {
    GenerateRequest req;
    BeamSearchParams params;
    std::string error;
    if (!readSampling(p, req, error) || !readBeamParams(p, req, params, error)) return usageError(error);
    const auto tLoad = Clock::now();
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const double loadMs = msSince(tLoad);
    Engine& e = **engine;
    if (!readRequest(p, e, req, error)) return failWith({ErrorCode::Io, error});
    auto r = e.beamSearch(req.prompt, params);
    if (!r) return failWith(r.error());
    const BeamHypothesis& best = r->hypotheses.front();
    if (p.isSet("json")) {
        writeOut(beamJson(req, params, *r, loadMs).compact() + "\n");
        return 0;
    }
    writeOut(best.text + "\n");
    std::fprintf(stderr,
                 "[%d beams: log-prob %.4f, score %.4f, %zu tokens, %s; %d tokens computed in %d passes, at most %d KV "
                 "blocks]\n",
                 params.nBeams, best.logProb, best.score, best.tokens.size(), beamEndName(best.end), r->nForwardTokens,
                 r->nForwardPasses, r->peakBlocksUsed);
    return 0;
}

}  // namespace hearth::cli::core
