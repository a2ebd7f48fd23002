// Where tests find models, shared test data and the test Python; and the rule for missing data:
// skip with a message on a developer machine, fail under CI=true.
#pragma once

#include <QFileInfo>
#include <QString>
#include <QTest>
#include <QtGlobal>

namespace hearth::test {

inline QString envPath(const char* name) { return qEnvironmentVariable(name); }
inline QString testDataDir() { return envPath("HEARTH_TESTDATA"); }
inline QString modelsDir() { return envPath("HEARTH_MODELS_DIR"); }
inline QString pythonExe() { return envPath("HEARTH_PYTHON"); }
inline QString cliExe() { return envPath("HEARTH_CLI"); }
inline QString sourceDir() { return envPath("HEARTH_SOURCE_DIR"); }
inline QString testDataFile(const QString& name) { return testDataDir() + "/" + name; }
inline QString modelFile(const QString& name) { return modelsDir() + "/" + name; }
inline bool underCi() { return qEnvironmentVariable("CI") == QLatin1String("true"); }

}  // namespace hearth::test

// Skips (developer machine) or fails (CI=true) when a file a test needs is absent.
#define HEARTH_REQUIRE_FILE(path)                                                    \
    do {                                                                             \
        const QString hearthPath_ = (path);                                          \
        if (!QFileInfo::exists(hearthPath_)) {                                       \
            const QByteArray msg_ = ("missing test input: " + hearthPath_).toUtf8(); \
            if (hearth::test::underCi()) QFAIL(msg_.constData());                    \
            QSKIP(msg_.constData());                                                 \
        }                                                                            \
    } while (false)

namespace hearth::test {
inline QString oraclePython() { return envPath("HEARTH_ORACLE_PYTHON"); }
// llama.cpp's vocab-only files (ggml-vocab-NAME.gguf with .inp/.out cases), from the oracle's
// source archive (setup-oracle.sh).
inline QString llamaVocabDir() { return envPath("HEARTH_LLAMA_VOCAB"); }
}  // namespace hearth::test
