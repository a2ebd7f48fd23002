// Parameter table, presets and the GGUF general.sampling.* reader (../shared/GGUF.md).
#include "app/chat/chat_settings.h"

#include <QJsonArray>
#include <algorithm>
#include <cstring>

#include "engine/model/gguf.h"

namespace hearth {

namespace {

// Pointers to the field behind each key; int fields are stored through doubles.
struct Field {
    float* f = nullptr;
    int32_t* i = nullptr;
    int64_t* l = nullptr;
};

Field fieldOf(ChatSettings& s, const char* key) {
    SamplingParams& p = s.sampling;
    const std::pair<const char*, Field> fields[] = {
        {"temperature", {&p.temperature}},
        {"top_k", {nullptr, &p.topK}},
        {"top_p", {&p.topP}},
        {"min_p", {&p.minP}},
        {"typical_p", {&p.typicalP}},
        {"repeat_penalty", {&p.repeatPenalty}},
        {"presence_penalty", {&p.presencePenalty}},
        {"frequency_penalty", {&p.frequencyPenalty}},
        {"repeat_last_n", {nullptr, &p.repeatLastN}},
        {"seed", {nullptr, nullptr, &s.seed}},
        {"max_tokens", {nullptr, &s.maxTokens}},
    };
    for (const auto& [k, f] : fields)
        if (std::strcmp(k, key) == 0) return f;
    return {};
}

const ParamRange* rangeOf(const char* key) {
    for (const ParamRange& r : paramRanges())
        if (std::strcmp(r.key, key) == 0) return &r;
    return nullptr;
}

}  // namespace

bool operator==(const ChatSettings& a, const ChatSettings& b) { return toJson(a) == toJson(b); }

const std::vector<ParamRange>& paramRanges() {
    // The engine's validate() accepts these; the upper ends of penalties and top-k are
    // practical limits (beyond them the reply is noise or the parameter does nothing).
    static const std::vector<ParamRange> ranges = {
        {"temperature", 0.0, 2.0, 0.05, 2},
        {"top_k", 0, 1000, 1, 0},
        {"top_p", 0.0, 1.0, 0.01, 2},
        {"min_p", 0.0, 1.0, 0.01, 2},
        {"typical_p", 0.0, 1.0, 0.01, 2},
        {"repeat_penalty", 0.5, 2.0, 0.01, 2},
        {"presence_penalty", -2.0, 2.0, 0.05, 2},
        {"frequency_penalty", -2.0, 2.0, 0.05, 2},
        {"repeat_last_n", -1, 4096, 1, 0},
        {"seed", -1, 2147483647.0, 1, 0},
        {"max_tokens", 1, 32768, 1, 0},
    };
    return ranges;
}

double paramValue(const ChatSettings& s, const char* key) {
    const Field f = fieldOf(const_cast<ChatSettings&>(s), key);
    if (f.f) return *f.f;
    if (f.i) return *f.i;
    if (f.l) return static_cast<double>(*f.l);
    return 0.0;
}

void setParamValue(ChatSettings& s, const char* key, double value) {
    const ParamRange* r = rangeOf(key);
    const Field f = fieldOf(s, key);
    if (!r) return;
    value = std::clamp(value, r->min, r->max);
    if (f.f) *f.f = static_cast<float>(value);
    if (f.i) *f.i = static_cast<int32_t>(std::llround(value));
    if (f.l) *f.l = std::llround(value);
}

ChatSettings modelDefaults(const GgufFile& file) {
    ChatSettings s;
    s.sampling.temperature = 0.7f;
    // general.sampling.* names (llama.cpp's convention) -> our keys.
    const std::pair<const char*, const char*> keys[] = {
        {"general.sampling.temp", "temperature"},
        {"general.sampling.top_k", "top_k"},
        {"general.sampling.top_p", "top_p"},
        {"general.sampling.min_p", "min_p"},
        {"general.sampling.typ_p", "typical_p"},
        {"general.sampling.penalty_repeat", "repeat_penalty"},
        {"general.sampling.penalty_last_n", "repeat_last_n"},
    };
    for (const auto& [gguf, ours] : keys)
        if (const GgufValue* v = file.find(gguf))
            if (auto x = v->asFloat()) setParamValue(s, ours, *x);
    return s;
}

QStringList builtinPresetNames() {
    return {QStringLiteral("Precise"), QStringLiteral("Balanced"), QStringLiteral("Creative")};
}

ChatSettings applyBuiltinPreset(const QString& name, ChatSettings base) {
    SamplingParams& p = base.sampling;
    if (name == QLatin1String("Precise")) {
        p.temperature = 0.2f, p.topK = 40, p.topP = 0.9f, p.minP = 0.05f, p.repeatPenalty = 1.05f;
    } else if (name == QLatin1String("Balanced")) {
        p.temperature = 0.7f, p.topK = 40, p.topP = 0.95f, p.minP = 0.05f, p.repeatPenalty = 1.0f;
    } else if (name == QLatin1String("Creative")) {
        p.temperature = 1.1f, p.topK = 100, p.topP = 0.98f, p.minP = 0.02f, p.repeatPenalty = 1.0f;
    }
    p.typicalP = 1.0f, p.presencePenalty = 0.0f, p.frequencyPenalty = 0.0f;
    return base;
}

QJsonObject toJson(const ChatSettings& s) {
    QJsonObject o;
    for (const ParamRange& r : paramRanges()) o.insert(QLatin1String(r.key), paramValue(s, r.key));
    o.insert(QStringLiteral("stop"), QJsonArray::fromStringList(s.stop));
    o.insert(QStringLiteral("system_prompt"), s.systemPrompt);
    o.insert(QStringLiteral("thinking"), s.thinking);
    return o;
}

ChatSettings fromJson(const QJsonObject& o, ChatSettings base) {
    for (const ParamRange& r : paramRanges())
        if (const QJsonValue v = o.value(QLatin1String(r.key)); v.isDouble()) setParamValue(base, r.key, v.toDouble());
    if (const QJsonValue v = o.value(QStringLiteral("stop")); v.isArray()) {
        base.stop.clear();
        for (const QJsonValue& x : v.toArray())
            if (x.isString() && !x.toString().isEmpty()) base.stop << x.toString();
    }
    if (const QJsonValue v = o.value(QStringLiteral("system_prompt")); v.isString()) base.systemPrompt = v.toString();
    if (const QJsonValue v = o.value(QStringLiteral("thinking")); v.isBool()) base.thinking = v.toBool();
    return base;
}

}  // namespace hearth
