// hearth-cli batch: several requests in one engine (continuous batching). generate is the
// Qt-free core's (app/cli_core/core_commands.cpp).
#include <QFile>
#include <QJsonDocument>
#include <algorithm>
#include <cstdio>
#include <map>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_common.h"
#include "engine/str_cat.h"

namespace hearth::cli {
namespace {

// One line of a batch file as generate's options: {"max_tokens": 8} is --max-tokens 8,
// true is a flag, an array repeats the option.
bool batchLineRequest(const QByteArray& line, const Engine& e, GenerateRequest& req, QString& error) {
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &parseError);
    if (!doc.isObject()) {
        error = "not a JSON object: " + parseError.errorString();
        return false;
    }
    QStringList args{"hearth-cli"};
    const QJsonObject obj = doc.object();
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const QString option = "--" + QString(it.key()).replace('_', '-');
        const QJsonArray values = it->isArray() ? it->toArray() : QJsonArray{*it};
        for (const QJsonValue& v : values) {
            if (v.isBool()) {
                if (v.toBool()) args << option;
            } else {
                args << option << (v.isString() ? v.toString() : QString::number(v.toDouble(), 'g', 17));
            }
        }
    }
    QCommandLineParser p;
    return parseOptions(p, args, error) && readRequest(p, e, req, error);
}

bool readBatch(const QString& path, const Engine& e, std::vector<GenerateRequest>& out, QString& error) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        error = "cannot open " + path;
        return false;
    }
    int lineNo = 0;
    while (!f.atEnd()) {
        const QByteArray line = f.readLine().trimmed();
        ++lineNo;
        if (line.isEmpty()) continue;
        GenerateRequest req;
        if (!batchLineRequest(line, e, req, error)) {
            error = QStringLiteral("%1 line %2: %3").arg(path).arg(lineNo).arg(error);
            return false;
        }
        out.push_back(std::move(req));
    }
    return true;
}

// Submits requests [from, to) together and steps until all of them have finished.
Result<void> runTogether(Engine& e, const std::vector<GenerateRequest>& reqs, size_t from, size_t to,
                         std::vector<Outcome>& outcomes) {
    std::map<RequestId, size_t> idToIndex;
    for (size_t i = from; i < to; ++i) {
        auto id = e.submit(reqs[i]);
        if (!id) return std::unexpected(id.error());
        idToIndex[*id] = i;
    }
    while (!e.idle())
        for (const EngineEvent& ev : e.step()) record(outcomes[idToIndex.at(ev.request)], ev);
    return {};
}

int cmdBatch(const QCommandLineParser& p) {
    if (!p.isSet("model") || !p.isSet("requests")) return usageError("batch needs --model and --requests");
    const auto tLoad = Clock::now();
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const double loadMs = msSince(tLoad);
    Engine& e = **engine;
    std::vector<GenerateRequest> reqs;
    QString error;
    if (!readBatch(p.value("requests"), e, reqs, error)) return usageError(error);
    std::vector<Outcome> outcomes(reqs.size());
    const size_t step = p.isSet("sequential") ? 1 : std::max<size_t>(reqs.size(), 1);
    for (size_t from = 0; from < reqs.size(); from += step)
        if (auto r = runTogether(e, reqs, from, std::min(from + step, reqs.size()), outcomes); !r)
            return failWith(r.error());
    for (size_t i = 0; i < reqs.size(); ++i) {
        if (p.isSet("json")) {
            writeOut(
                QJsonDocument(resultJson(reqs[i], outcomes[i], loadMs)).toJson(QJsonDocument::Compact).toStdString() +
                "\n");
            continue;
        }
        writeOut(strCat("[", i, "] ", outcomes[i].text, "\n"));
        printStats(outcomes[i]);
    }
    return 0;
}

}  // namespace

Command batchCommand() {
    return {"batch",
            "  batch    --model PATH --requests FILE.jsonl [--sequential] [--json]\n"
            "           each line an object of generate's options: {\"prompt\": \"...\", \"max_tokens\": 8,\n"
            "           \"raw\": true, \"stop\": [\"...\"], ...}; all submitted together, or one after\n"
            "           another with --sequential; --json prints one line per request, in input order\n",
            nullptr, cmdBatch};
}

}  // namespace hearth::cli
