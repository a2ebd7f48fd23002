// hearth-cli generate --spec ngram|draft:PATH [--spec-max N]: speculative decoding
// (Engine::generate with GenerateRequest::spec); --json adds the drafted, accepted and bonus
// counts; without --json they follow the timings on stderr.
#include <QJsonDocument>
#include <cstdio>

#include "app/cli/cli_commands.h"

namespace hearth::cli {
namespace {

bool readSpecOptions(const QCommandLineParser& p, SpecOptions& spec, QString& error) {
    const QString value = p.value("spec");
    if (value == "ngram") {
        spec.drafter = SpecDrafter::NGram;
    } else if (value.startsWith("draft:") && value.size() > 6) {
        spec.drafter = SpecDrafter::DraftModel;
        spec.draftModelPath = value.mid(6).toStdString();
    } else {
        error = "--spec must be ngram or draft:PATH, not '" + value + "'";
        return false;
    }
    if (!number(p, "spec-max", spec.maxDraft, error)) return false;
    if (spec.maxDraft < 1 || spec.maxDraft > 32) {
        error = "--spec-max must be 1..32";
        return false;
    }
    return true;
}

QJsonObject specJson(const SpecStats& s, size_t nTokens) {
    return {{"drafted", s.drafted},
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

int runSpecGenerate(const QCommandLineParser& p) {
    GenerateRequest req;
    QString error;
    if (!readSampling(p, req, error) || !readSpecOptions(p, req.spec, error)) return usageError(error);
    const auto tLoad = Clock::now();
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const double loadMs = msSince(tLoad);
    Engine& e = **engine;
    const SpecOptions spec = req.spec;
    if (!readRequest(p, e, req, error)) return failWith({ErrorCode::Io, error.toStdString()});
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
        QJsonObject obj = resultJson(req, o, loadMs);
        obj.insert("spec", specJson(r->spec, r->tokens.size()));
        writeOut(QJsonDocument(obj).toJson(QJsonDocument::Compact).toStdString() + "\n");
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

}  // namespace hearth::cli
