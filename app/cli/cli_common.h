// What every hearth-cli command of the full build shares, over QCommandLineParser: the option
// set, reading sampling options and prompts into a request, loading the engine, gathering step()
// events, and printing results (text, stats, --json). Each command lives in its own cli_*.cpp
// and is listed in cli.cpp. The work is done once, by the Qt-free core (app/cli_core/
// core_common.h), which the commands generate, tokenize and info use directly.
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

#include "app/cli_core/core_common.h"
#include "engine/engine.h"

namespace hearth::cli {

using core::Clock;
using core::msSince;
using core::Outcome;
using core::printStats;
using core::record;

// The parsed options as the core reads them.
class QtOptionView final : public core::OptionView {
public:
    explicit QtOptionView(const QCommandLineParser& p) : p_(p) {}
    bool isSet(std::string_view name) const override;
    std::string value(std::string_view name) const override;
    std::vector<std::string> values(std::string_view name) const override;

private:
    const QCommandLineParser& p_;
};

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

// The options every command accepts (model, prompt, sampling, limits, output).
QList<QCommandLineOption> commonOptions();
// Parses args (program name first) with the common options plus extra.
bool parseOptions(QCommandLineParser& p, const QStringList& args, QString& error,
                  const QList<QCommandLineOption>& extra = {});

// Reads option `name` as a number of type T; on failure sets error and returns false.
template <class T>
bool number(const QCommandLineParser& p, const char* name, T& out, QString& error) {
    std::string message;
    const bool ok = core::number(QtOptionView(p), name, out, message);
    if (!ok) error = QString::fromStdString(message);
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

// generate --json's object.
QJsonObject resultJson(const GenerateRequest& req, const Outcome& o, double loadMs);

}  // namespace hearth::cli
