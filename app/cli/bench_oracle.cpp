// The oracle_bench.py client (bench_oracle.h): one JSON line per request and per answer.
#include "app/cli/bench_oracle.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcessEnvironment>

#include "engine/str_cat.h"

namespace hearth {
namespace {

constexpr int kLoadTimeoutMs = 600000;  // a large model on a busy machine
constexpr int kRunTimeoutMs = 3600000;

}  // namespace

QString OracleBench::defaultPython() {
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (env.contains("HEARTH_ORACLE_PYTHON")) return env.value("HEARTH_ORACLE_PYTHON");
    const QString cache = env.value("XDG_CACHE_HOME", QDir::homePath() + "/.cache");
    return cache + "/hearth/oracle-venv/bin/python3";
}

QString OracleBench::defaultScript() {
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (env.contains("HEARTH_ORACLE_BENCH")) return env.value("HEARTH_ORACLE_BENCH");
    // In-tree builds: the executable lives in <source>/<build>/app/.
    QDir dir = QFileInfo(QFileInfo("/proc/self/exe").symLinkTarget()).absoluteDir();
    for (int up = 0; up < 5; ++up) {
        const QString candidate = dir.filePath("packaging/scripts/oracle_bench.py");
        if (QFileInfo::exists(candidate)) return candidate;
        if (!dir.cdUp()) break;
    }
    return "oracle_bench.py";
}

Result<QByteArray> OracleBench::readLine(int timeoutMs) {
    while (!process_.canReadLine()) {
        if (process_.state() != QProcess::Running || !process_.waitForReadyRead(timeoutMs)) {
            const QString err = QString::fromUtf8(process_.readAllStandardError()).trimmed().right(600);
            if (process_.state() == QProcess::Running)
                return fail(ErrorCode::Io,
                            "the llama.cpp oracle did not answer in time; its stderr ends: " + err.toStdString());
            process_.waitForFinished(1000);
            // How it ended first: a crash's last stderr lines are often harmless warnings.
            const std::string how = process_.exitStatus() == QProcess::CrashExit
                ? strCat("was killed by signal ", process_.exitCode(),
                         " (an oracle built for instructions this host cannot run dies with "
                         "SIGILL or SIGSEGV: rerun packaging/scripts/setup-oracle.sh)")
                : strCat("exited with code ", process_.exitCode());
            return fail(ErrorCode::Io, "the llama.cpp oracle " + how + "; its stderr ends: " + err.toStdString());
        }
    }
    return process_.readLine();
}

Result<std::unique_ptr<OracleBench>> OracleBench::start(const QString& python, const QString& script,
                                                        const QString& model, int nThreads, int contextLength) {
    if (!QFileInfo::exists(python))
        return fail(ErrorCode::Io,
                    "no oracle Python at " + python.toStdString() +
                        " (packaging/scripts/setup-oracle.sh installs it; or set HEARTH_ORACLE_PYTHON)");
    if (!QFileInfo::exists(script))
        return fail(ErrorCode::Io, "no " + script.toStdString() + " (set HEARTH_ORACLE_BENCH)");
    std::unique_ptr<OracleBench> o(new OracleBench());
    o->process_.start(
        python,
        {script, "--model", model, "--threads", QString::number(nThreads), "--ctx", QString::number(contextLength)});
    if (!o->process_.waitForStarted(30000)) return fail(ErrorCode::Io, "cannot start " + python.toStdString());
    auto line = o->readLine(kLoadTimeoutMs);
    if (!line) return std::unexpected(line.error());
    const QJsonObject ready = QJsonDocument::fromJson(*line).object();
    if (!ready.value("ready").toBool())
        return fail(ErrorCode::Io, "the llama.cpp oracle did not start: " + line->trimmed().toStdString());
    o->version_ = ready.value("version").toString();
    return o;
}

OracleBench::~OracleBench() {
    process_.closeWriteChannel();  // the script ends at end of input
    if (!process_.waitForFinished(10000)) {
        process_.kill();
        process_.waitForFinished();
    }
}

Result<OracleRun> OracleBench::run(const std::vector<int32_t>& prompt, int nGen) {
    QJsonArray ids;
    for (const int32_t id : prompt) ids.append(id);
    const QJsonObject request{{"prompt", ids}, {"gen", nGen}};
    process_.readAllStandardError();  // llama.cpp's log so far: not needed
    process_.write(QJsonDocument(request).toJson(QJsonDocument::Compact) + "\n");
    auto line = readLine(kRunTimeoutMs);
    if (!line) return std::unexpected(line.error());
    const QJsonObject answer = QJsonDocument::fromJson(*line).object();
    if (answer.contains("error") || !answer.contains("decode_ms"))
        return fail(ErrorCode::Io, "the llama.cpp oracle failed: " + line->trimmed().toStdString());
    OracleRun r;
    r.prefillTokens = answer.value("prefill_tokens").toInteger();
    r.decodeTokens = answer.value("decode_tokens").toInteger();
    r.prefillMs = answer.value("prefill_ms").toDouble();
    r.decodeMs = answer.value("decode_ms").toDouble();
    return r;
}

}  // namespace hearth
