// What shapes one reply: the sampling parameters, the length limit, stop strings and the
// system prompt. Ranges that the settings panel enforces, built-in presets, the model's own
// recommended values (GGUF general.sampling.*), and JSON for per-conversation overrides.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <vector>

#include "engine/sample/sampler.h"

namespace hearth {

class GgufFile;

struct ChatSettings {
    SamplingParams sampling;
    int32_t maxTokens = 512;
    int64_t seed = -1;  // -1: a fresh random seed for each reply (sampling.seed is ignored)
    QStringList stop;  // stop strings: the reply ends before them
    QString systemPrompt;  // empty: the model's default, if its template has one
    bool thinking = true;  // a thinking model reasons before it answers (only Qwen 3's format can turn it off)
};

bool operator==(const ChatSettings& a, const ChatSettings& b);

// One numeric parameter: its JSON key, the range the panel enforces, and how to show it.
struct ParamRange {
    const char* key;
    double min, max, step;
    int decimals;  // 0 for integers
};
// Every numeric parameter, in the panel's order.
const std::vector<ParamRange>& paramRanges();
double paramValue(const ChatSettings& s, const char* key);
// Sets the value, clamped into its range. Unknown keys are ignored.
void setParamValue(ChatSettings& s, const char* key, double value);

// Hearth's own defaults, overridden by the model's general.sampling.* keys where present.
ChatSettings modelDefaults(const GgufFile& file);
// "Precise", "Balanced", "Creative": applied on top of base (system prompt, stop kept).
QStringList builtinPresetNames();
ChatSettings applyBuiltinPreset(const QString& name, ChatSettings base);

// All fields; fromJson starts from base and takes what the object has (clamped).
QJsonObject toJson(const ChatSettings& s);
ChatSettings fromJson(const QJsonObject& o, ChatSettings base);

}  // namespace hearth
