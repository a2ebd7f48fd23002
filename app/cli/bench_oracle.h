// llama.cpp's timings of the same runs, for `hearth-cli bench --compare-oracle`: a long-lived
// packaging/scripts/oracle_bench.py process (llama-cpp-python from the conformance oracle's
// environment) that loads the model once and times one prompt per request, so that its runs
// interleave with Hearth's. Not thread-safe; one owner.
#pragma once

#include <QProcess>
#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/error.h"

namespace hearth {

struct OracleRun {
    int64_t prefillTokens = 0, decodeTokens = 0;
    double prefillMs = 0, decodeMs = 0;
};

class OracleBench {
public:
    // The Python: HEARTH_ORACLE_PYTHON, else the oracle venv in the cache folder.
    static QString defaultPython();
    // oracle_bench.py: HEARTH_ORACLE_BENCH, else found next to the source tree above the executable.
    static QString defaultScript();

    // Starts the script and waits until the model is loaded. Errors: Io (cannot start, or the
    // script failed: its last lines of stderr in the message).
    static Result<std::unique_ptr<OracleBench>> start(const QString& python, const QString& script,
                                                      const QString& model, int nThreads, int contextLength);
    ~OracleBench();

    const QString& version() const { return version_; }
    // Prefill of prompt, then nGen - 1 decodes. Errors: Io.
    Result<OracleRun> run(const std::vector<int32_t>& prompt, int nGen);

private:
    OracleBench() = default;
    Result<QByteArray> readLine(int timeoutMs);
    QProcess process_;
    QString version_;
};

}  // namespace hearth
