// What hearth-cli's commands share, without Qt (the Windows build has no Qt): the option table,
// reading sampling options and prompts into a request, loading the engine, gathering step()
// events, and printing results (text, stats, --json). app/cli/cli_common.h offers the same over
// QCommandLineParser for the commands of the full build; both call these.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "app/cli_core/json.h"
#include "app/cli_core/options.h"
#include "engine/engine.h"

namespace hearth::cli::core {

using Clock = std::chrono::steady_clock;

// Prints "hearth-cli: MESSAGE" and a hint on stderr; returns 2 (usage error).
int usageError(const std::string& message);
// Prints the error on stderr; returns 1.
int failWith(const Error& error);
// The one line a person reads for an engine error (app/common/error_text.h's describe()).
[[nodiscard]] std::string describeError(const Error& error);
void writeOut(std::string_view text);
[[nodiscard]] Json toJson(const std::vector<TokenId>& ids);
[[nodiscard]] double msSince(Clock::time_point t0);

// The options every command accepts (model, prompt, sampling, limits, output), and those of a
// conversation store (--db ...: commands of the full build).
[[nodiscard]] std::vector<OptionSpec> commonOptionSpecs();
[[nodiscard]] std::vector<OptionSpec> storeOptionSpecs();

// Number parsing as QString::toDouble / toLongLong / toULongLong read it (surrounding spaces
// allowed, base 10); false when s is no number of that kind or out of range.
[[nodiscard]] bool parseDouble(std::string_view s, double& out);
[[nodiscard]] bool parseLongLong(std::string_view s, long long& out);
[[nodiscard]] bool parseULongLong(std::string_view s, unsigned long long& out);

// Reads option `name` as a number of type T; on failure sets error and returns false.
template <class T>
bool number(const OptionView& p, const char* name, T& out, std::string& error) {
    bool ok = false;
    const std::string s = p.value(name);
    if constexpr (std::is_floating_point_v<T>) {
        double v = 0;
        ok = parseDouble(s, v);
        out = static_cast<T>(v);
    } else if constexpr (std::is_unsigned_v<T>) {
        unsigned long long v = 0;
        ok = parseULongLong(s, v);
        out = static_cast<T>(v);
    } else {
        long long v = 0;
        ok = parseLongLong(s, v);
        ok = ok && v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
        out = static_cast<T>(v);
    }
    if (!ok) error = "--" + std::string(name) + ": '" + s + "' is not a valid number";
    return ok;
}

// Sampling, limits and stop strings of the options into req (not the prompt).
bool readSampling(const OptionView& p, GenerateRequest& req, std::string& error);
// EngineOptions from --ctx, --kv-type and the other engine options.
Result<EngineOptions> readEngineOptions(const OptionView& p);
// Engine::load of --model with those options; packWeights false: no repacking (facts only). A
// packed-weights cache file ignored as damaged is said on stderr.
Result<std::unique_ptr<Engine>> loadEngine(const OptionView& p, bool packWeights = true);
// False with --no-think: the chat prompt turns reasoning off where the format can (RenderOptions).
bool thinks(const OptionView& p);
// The prompt text of --prompt or --prompt-file.
bool readPromptText(const OptionView& p, std::string& prompt, std::string& error);
// A whole request from generate's options: sampling, limits, and the prompt (chat-formatted
// with --system unless --raw).
bool readRequest(const OptionView& p, const Engine& e, GenerateRequest& req, std::string& error);

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
[[nodiscard]] Json generateJson(const GenerateRequest& req, const Outcome& o, double loadMs);
// One line of timings on stderr.
void printStats(const Outcome& o);

}  // namespace hearth::cli::core
