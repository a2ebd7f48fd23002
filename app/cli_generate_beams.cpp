// hearth-cli generate --beams K: beam search (Engine::beamSearch) instead of sampling; prints
// the best hypothesis, or with --json all finished hypotheses, best first.
#include <QJsonDocument>
#include <cstdio>

#include "app/cli_commands.h"

namespace hearth::cli {
namespace {

QJsonObject beamJson(const GenerateRequest& req, const BeamSearchParams& params, const BeamSearchResult& r,
                     const std::string& text, double loadMs) {
    const BeamHypothesis& best = r.hypotheses.front();
    QJsonArray hypotheses;
    for (const BeamHypothesis& h : r.hypotheses)
        hypotheses.append(QJsonObject{{"tokens", toJson(h.tokens)}, {"log_prob", h.logProb}, {"score", h.score}});
    return QJsonObject{{"prompt_tokens", toJson(req.prompt)}, {"tokens", toJson(best.tokens)},
                       {"text", QString::fromStdString(text)}, {"finish_reason", best.ended ? "eos" : "length"},
                       {"beams", params.nBeams}, {"beam_length_norm", params.lengthNormAlpha},
                       {"log_prob", best.logProb}, {"score", best.score}, {"hypotheses", hypotheses},
                       {"computed_tokens", r.nForwardTokens}, {"peak_kv_blocks", r.peakBlocksUsed},
                       {"load_ms", loadMs}};
}

}  // namespace

int runBeamGenerate(const QCommandLineParser& p) {
    GenerateRequest req;
    BeamSearchParams params;
    QString error;
    if (!readSampling(p, req, error) || !number(p, "beams", params.nBeams, error) ||
        !number(p, "beam-length-norm", params.lengthNormAlpha, error))
        return usageError(error);
    if (params.nBeams < 1 || params.lengthNormAlpha < 0 || req.maxTokens < 1)
        return usageError("--beams and --max-tokens must be >= 1, --beam-length-norm >= 0");
    params.maxTokens = req.maxTokens;
    const auto tLoad = Clock::now();
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const double loadMs = msSince(tLoad);
    Engine& e = **engine;
    if (!readRequest(p, e, req, error)) return failWith({ErrorCode::Io, error.toStdString()});
    auto r = e.beamSearch(req.prompt, params);
    if (!r) return failWith(r.error());
    const BeamHypothesis& best = r->hypotheses.front();
    std::vector<TokenId> shown = best.tokens;
    if (best.ended) shown.pop_back();  // the end token is not text
    const std::string text = e.tokenizer().decode(shown);
    if (p.isSet("json")) {
        writeOut(QJsonDocument(beamJson(req, params, *r, text, loadMs)).toJson(QJsonDocument::Compact).toStdString() + "\n");
        return 0;
    }
    writeOut(text + "\n");
    std::fprintf(stderr, "[%d beams: log-prob %.4f, score %.4f, %zu tokens, %s; %d tokens computed, at most %d KV blocks]\n",
                 params.nBeams, best.logProb, best.score, best.tokens.size(), best.ended ? "eos" : "length",
                 r->nForwardTokens, r->peakBlocksUsed);
    return 0;
}

}  // namespace hearth::cli
