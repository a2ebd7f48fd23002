// What every hearth-cli command shares: the option set, reading sampling options and
// prompts into a request, loading the engine, gathering step() events, and printing results
// (text, stats, --json). Each command lives in its own cli_*.cpp and is listed in cli.cpp.
#pragma once

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/engine.h"

namespace hearth::cli {

using Clock = std::chrono::steady_clock;

// One command: its name, its lines of the usage text, and its entry point. Options are parsed
// with the common set plus the command's extra options before run() is called.
struct Command {
    const char* name;
    const char* usage;
    QList<QCommandLineOption> (*extraOptions)();  // may be null
    int (*run)(const QCommandLineParser& p);
};

// Prints "hearth-cli: MESSAGE" and a hint on stderr; returns 2 (usage error).
int usageError(const QString& message);
// Prints the error on stderr; returns 1.
int failWith(const Error& error);
void writeOut(std::string_view text);
QJsonArray toJson(const std::vector<TokenId>& ids);
double msSince(Clock::time_point t0);

// The options every command accepts (model, prompt, sampling, limits, output).
QList<QCommandLineOption> commonOptions();
// Parses args (program name first) with the common options plus extra.
bool parseOptions(QCommandLineParser& p, const QStringList& args, QString& error,
                  const QList<QCommandLineOption>& extra = {});

// Reads option `name` as a number of type T; on failure sets error and returns false.
template <class T>
bool number(const QCommandLineParser& p, const char* name, T& out, QString& error) {
    bool ok = false;
    const QString s = p.value(name);
    if constexpr (std::is_floating_point_v<T>) out = static_cast<T>(s.toDouble(&ok));
    else if constexpr (std::is_unsigned_v<T>) out = static_cast<T>(s.toULongLong(&ok));
    else {
        const qlonglong v = s.toLongLong(&ok);
        ok = ok && v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
        out = static_cast<T>(v);
    }
    if (!ok) error = QStringLiteral("--%1: '%2' is not a valid number").arg(name, s);
    return ok;
}

// Sampling, limits and stop strings of the options into req (not the prompt).
bool readSampling(const QCommandLineParser& p, GenerateRequest& req, QString& error);
// EngineOptions from --ctx, --kv-type and the other engine options.
Result<EngineOptions> readEngineOptions(const QCommandLineParser& p);
Result<std::unique_ptr<Engine>> loadEngine(const QCommandLineParser& p);
// False with --no-think: the chat prompt turns reasoning off where the format can (RenderOptions).
bool thinks(const QCommandLineParser& p);
// The prompt text of --prompt or --prompt-file.
bool readPromptText(const QCommandLineParser& p, std::string& prompt, QString& error);
// A whole request from generate's options: sampling, limits, and the prompt (chat-formatted
// with --system unless --raw).
bool readRequest(const QCommandLineParser& p, const Engine& e, GenerateRequest& req, QString& error);

// What one request produced, gathered from step() events.
struct Outcome {
    std::vector<TokenId> tokens;
    std::string text;
    std::vector<std::vector<std::pair<TokenId, float>>> topLogits;
    FinishReason reason = FinishReason::Length;
    GenerateTimings timings;
    std::optional<Error> error;
    bool finished = false;
};

// Records an event; returns the text it shows.
std::string_view record(Outcome& o, const EngineEvent& e);
// generate --json's object.
QJsonObject resultJson(const GenerateRequest& req, const Outcome& o, double loadMs);
// One line of timings on stderr.
void printStats(const Outcome& o);

}  // namespace hearth::cli
