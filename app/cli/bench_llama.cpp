// llama-bench as a child process (bench_llama.h).
#include "app/cli/bench_llama.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>

#include "engine/str_cat.h"

namespace hearth {
namespace {

constexpr const char* kBuildScript = "packaging/scripts/build-llama-tools.sh";
// A depth fill of tens of thousands of tokens on a small machine takes many minutes.
constexpr int kRunTimeoutMs = 4 * 3600 * 1000;

// The build script in the source tree above the executable (in-tree builds: <source>/<build>/app/).
QString findBuildScript() {
    QDir dir = QFileInfo(QFileInfo("/proc/self/exe").symLinkTarget()).absoluteDir();
    for (int up = 0; up < 5; ++up) {
        const QString candidate = dir.filePath(kBuildScript);
        if (QFileInfo::exists(candidate)) return candidate;
        if (!dir.cdUp()) break;
    }
    return {};
}

Error notBuilt(const std::string& why) {
    return {ErrorCode::Io,
            strCat("llama.cpp's llama-bench is missing (", why, "); build it once with ", kBuildScript,
                   " (about 20-40 minutes on 2 cores), or set HEARTH_LLAMA_BENCH to a llama-bench")};
}

QString stderrTail(QProcess& p) { return QString::fromUtf8(p.readAllStandardError()).trimmed().right(800); }

}  // namespace

Result<LlamaBenchTool> findLlamaBench() {
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    LlamaBenchTool tool;
    if (env.contains("HEARTH_LLAMA_BENCH")) {
        tool.exe = env.value("HEARTH_LLAMA_BENCH");
        if (!QFileInfo(tool.exe).isExecutable())
            return std::unexpected(notBuilt("HEARTH_LLAMA_BENCH=" + tool.exe.toStdString() + " is not executable"));
        tool.buildInfo = "HEARTH_LLAMA_BENCH=" + tool.exe;
        return tool;
    }
    const QString script = findBuildScript();
    if (script.isEmpty()) return std::unexpected(notBuilt("no source tree above this executable"));
    QProcess p;
    p.start("bash", {script, "--print"});
    if (!p.waitForStarted(10000) || !p.waitForFinished(120000))
        return std::unexpected(notBuilt("cannot run " + script.toStdString()));
    const QString bin = QString::fromUtf8(p.readAllStandardOutput()).trimmed().section('\n', -1);
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0 || bin.isEmpty())
        return std::unexpected(notBuilt("not built for this host"));
    tool.exe = QDir(bin).filePath("llama-bench");
    if (!QFileInfo(tool.exe).isExecutable()) return std::unexpected(notBuilt("no " + tool.exe.toStdString()));
    QFile info(QDir(bin).filePath("../build-info.txt"));
    if (info.open(QIODevice::ReadOnly)) {  // version, instruction sets, build time; not the CMake switches
        QStringList lines = QString::fromUtf8(info.readAll()).trimmed().split('\n');
        lines.removeIf([](const QString& line) { return line.startsWith("cmake:"); });
        tool.buildInfo = lines.join("; ");
    }
    return tool;
}

Result<std::vector<LlamaBenchRow>> runLlamaBench(const LlamaBenchTool& tool, const QString& model,
                                                 const LlamaBenchRun& run) {
    const QStringList args{"-m",  model,
                           "-t",  QString::number(run.nThreads),
                           "-d",  QString::number(run.depth),
                           "-p",  QString::number(run.nPrompt),
                           "-n",  QString::number(run.nGen),
                           "-fa", "0,1",
                           "-r",  QString::number(run.nRepeat),
                           "-b",  "512",
                           "-ub", "512",
                           "-o",  "json"};
    QProcess p;
    p.start(tool.exe, args);
    if (!p.waitForStarted(30000)) return fail(ErrorCode::Io, "cannot start " + tool.exe.toStdString());
    if (!p.waitForFinished(kRunTimeoutMs)) {
        p.kill();
        p.waitForFinished();
        return fail(ErrorCode::Io,
                    "llama-bench did not finish in time; its stderr ends: " + stderrTail(p).toStdString());
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        const std::string how = p.exitStatus() == QProcess::CrashExit
            ? "was killed (a build for instructions this host cannot run dies with SIGILL or SIGSEGV: rerun " +
                std::string(kBuildScript) + " --rebuild)"
            : strCat("exited with code ", p.exitCode());
        return fail(ErrorCode::Io, "llama-bench " + how + "; its stderr ends: " + stderrTail(p).toStdString());
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(p.readAllStandardOutput(), &parseError);
    if (!doc.isArray())
        return fail(ErrorCode::Io,
                    "llama-bench's report is not a JSON array: " + parseError.errorString().toStdString());
    std::vector<LlamaBenchRow> rows;
    for (const QJsonValue& v : doc.array()) {
        const QJsonObject o = v.toObject();
        if (!o.contains("avg_ts") || !o.contains("n_depth"))
            return fail(ErrorCode::Io, "llama-bench's report has no avg_ts");
        LlamaBenchRow row;
        row.nPrompt = o.value("n_prompt").toInt();
        row.nGen = o.value("n_gen").toInt();
        row.nDepth = o.value("n_depth").toInt();
        // An integer (llama_flash_attn_type: 0 off, 1 on) in this version, a boolean in older ones.
        const QJsonValue fa = o.value("flash_attn");
        row.flashAttention = fa.isBool() ? fa.toBool() : fa.toInt() == 1;
        row.tokensPerSecond = o.value("avg_ts").toDouble();
        row.cpuInfo = o.value("cpu_info").toString();
        rows.push_back(row);
    }
    return rows;
}

}  // namespace hearth
