// Request bodies field by field. Ranges follow OpenAI's API reference where it gives them
// (temperature 0–2, top_p 0–1, the penalties −2–2, logit_bias −100–100, top_logprobs 0–20);
// the engine's own checks (sampler validate) still run when the request is submitted.
#include "app/server/api_request.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QRandomGenerator>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

namespace hearth::server {
namespace {

constexpr int kMaxStopStrings = 16;
constexpr int kMaxTopLogprobs = 20;

using Fail = std::unexpected<ApiError>;

Fail badField(const char* name, const std::string& what) {
    return Fail(ApiError{.message = std::string("'") + name + "' " + what, .param = name});
}

// Reads optional fields of one object, remembering the first error.
class Fields {
public:
    explicit Fields(const QJsonObject& o) : o_(o) {}
    bool has(const char* name) const { return o_.contains(name) && !o_.value(name).isNull(); }
    std::optional<ApiError> error;

    // A number within [lo, hi] (integral when asked); absent or null leaves out untouched.
    template <class T>
    void number(const char* name, T& out, double lo, double hi) {
        if (error || !has(name)) return;
        const QJsonValue v = o_.value(name);
        if (!v.isDouble()) return set(badField(name, "must be a number"));
        const double d = v.toDouble();
        if (std::is_integral_v<T> && d != std::floor(d)) return set(badField(name, "must be an integer"));
        if (!(d >= lo && d <= hi)) return set(badField(name, "is out of range [" + fmt(lo) + ", " + fmt(hi) + "]"));
        out = static_cast<T>(d);
    }
    void boolean(const char* name, bool& out) {
        if (error || !has(name)) return;
        if (!o_.value(name).isBool()) return set(badField(name, "must be a boolean"));
        out = o_.value(name).toBool();
    }
    void string(const char* name, std::string& out) {
        if (error || !has(name)) return;
        if (!o_.value(name).isString()) return set(badField(name, "must be a string"));
        out = o_.value(name).toString().toStdString();
    }

private:
    static std::string fmt(double d) { return QString::number(d).toStdString(); }
    void set(Fail f) { error = f.error(); }
    const QJsonObject& o_;
};

// "content": a string, or an array of {"type": "text", "text": ...} parts (joined).
std::expected<std::string, ApiError> messageContent(const QJsonValue& v) {
    if (v.isNull() || v.isUndefined()) return std::string();
    if (v.isString()) return v.toString().toStdString();
    if (!v.isArray()) return badField("messages", "content must be a string or an array of text parts");
    std::string text;
    for (const QJsonValue& part : v.toArray()) {
        const QJsonObject p = part.toObject();
        if (p.value("type").toString() != "text" || !p.value("text").isString())
            return badField("messages", "content parts must be {\"type\": \"text\", \"text\": ...}");
        text += p.value("text").toString().toStdString();
    }
    return text;
}

std::expected<std::vector<ChatMessage>, ApiError> readMessages(const QJsonObject& o) {
    if (!o.value("messages").isArray()) return badField("messages", "must be an array of messages");
    std::vector<ChatMessage> out;
    for (const QJsonValue& m : o.value("messages").toArray()) {
        if (!m.isObject()) return badField("messages", "must hold objects");
        const std::string name = m.toObject().value("role").toString().toStdString();
        // "developer": OpenAI's newer name for the system role.
        auto role = name == "developer" ? Result<ChatRole>(ChatRole::System) : parseChatRole(name);
        if (!role) return badField("messages", "role must be system, developer, user or assistant");
        auto content = messageContent(m.toObject().value("content"));
        if (!content) return std::unexpected(content.error());
        out.push_back({*role, std::move(*content)});
    }
    if (out.empty()) return badField("messages", "must not be empty");
    return out;
}

std::expected<std::string, ApiError> readPrompt(const QJsonObject& o) {
    QJsonValue v = o.value("prompt");
    if (v.isArray() && v.toArray().size() == 1) v = v.toArray().first();
    if (!v.isString()) return badField("prompt", "must be a string (token-id and multiple prompts are not supported)");
    return v.toString().toStdString();
}

std::optional<ApiError> readStop(const QJsonObject& o, std::vector<std::string>& stop) {
    const QJsonValue v = o.value("stop");
    if (v.isNull() || v.isUndefined()) return std::nullopt;
    const QJsonArray items = v.isString() ? QJsonArray{v} : v.toArray();
    if ((!v.isString() && !v.isArray()) || items.size() > kMaxStopStrings)
        return badField("stop", "must be a string or an array of at most 16 strings").error();
    for (const QJsonValue& s : items) {
        if (!s.isString() || s.toString().isEmpty()) return badField("stop", "must hold non-empty strings").error();
        stop.push_back(s.toString().toStdString());
    }
    return std::nullopt;
}

std::optional<ApiError> readLogitBias(const QJsonObject& o, std::vector<LogitBias>& out) {
    const QJsonValue v = o.value("logit_bias");
    if (v.isNull() || v.isUndefined()) return std::nullopt;
    if (!v.isObject()) return badField("logit_bias", "must be an object of token id to bias").error();
    const QJsonObject biases = v.toObject();
    for (auto it = biases.begin(); it != biases.end(); ++it) {
        bool ok = false;
        const int id = it.key().toInt(&ok);
        if (!ok || id < 0) return badField("logit_bias", "has a key that is not a token id of this model").error();
        if (!it.value().isDouble() || std::abs(it.value().toDouble()) > 100)
            return badField("logit_bias", "values must be numbers in [-100, 100]").error();
        out.push_back(LogitBias{id, static_cast<float>(it.value().toDouble())});
    }
    return std::nullopt;
}

// Fields the server does not implement: refused rather than silently ignored.
std::optional<ApiError> refuseUnsupported(ApiKind kind, Fields& f, const QJsonObject& o) {
    int n = 1, bestOf = 1;
    f.number("n", n, 1, 128);
    if (!f.error && n != 1) return badField("n", "must be 1 (one choice per request)").error();
    if (kind == ApiKind::Chat) return f.error;
    bool echo = false;
    f.boolean("echo", echo);
    f.number("best_of", bestOf, 1, 128);
    if (!f.error && echo) return badField("echo", "is not supported").error();
    if (!f.error && bestOf != 1) return badField("best_of", "must be 1").error();
    if (!f.error && o.contains("suffix") && !o.value("suffix").isNull())
        return badField("suffix", "is not supported").error();
    return f.error;
}

// Sampling fields, limits and logprobs into r.
std::optional<ApiError> readGeneration(ApiKind kind, const QJsonObject& o, const ApiLimits& limits, ApiRequest& r) {
    Fields f(o);
    GenerateRequest& g = r.request;
    SamplingParams& s = g.sampling;
    s = limits.defaults;
    g.maxTokens = limits.contextLength;
    f.number("max_tokens", g.maxTokens, 0, limits.contextLength);
    f.number("max_completion_tokens", g.maxTokens, 0, limits.contextLength);
    f.number("temperature", s.temperature, 0, 2);
    f.number("top_p", s.topP, 0, 1);
    f.number("top_k", s.topK, 0, std::numeric_limits<int32_t>::max());
    f.number("min_p", s.minP, 0, 1);
    f.number("typical_p", s.typicalP, 0, 1);
    f.number("presence_penalty", s.presencePenalty, -2, 2);
    f.number("frequency_penalty", s.frequencyPenalty, -2, 2);
    f.number("repeat_penalty", s.repeatPenalty, 0.01, 10);
    f.number("repeat_last_n", s.repeatLastN, -1, limits.contextLength);
    int64_t seed = 0;  // absent: a fresh one, as OpenAI's sampling is unseeded by default
    const bool seeded = f.has("seed");
    f.number("seed", seed, -9007199254740992.0, 9007199254740992.0);  // integers a double holds exactly
    s.seed = seeded ? static_cast<uint64_t>(seed) : QRandomGenerator::global()->generate64();
    if (f.error) return f.error;
    if (kind == ApiKind::Chat) {
        f.boolean("logprobs", r.logprobs);
        f.number("top_logprobs", g.nTopLogits, 0, kMaxTopLogprobs);
        if (!f.error && g.nTopLogits > 0 && !r.logprobs)
            return badField("top_logprobs", "needs logprobs: true").error();
    } else {  // the legacy API: logprobs is the number of top tokens (0 = the chosen one's only)
        int n = -1;
        f.number("logprobs", n, 0, kMaxTopLogprobs);
        r.logprobs = n >= 0;
        g.nTopLogits = std::max(0, n);
    }
    g.logprobs = r.logprobs;
    f.boolean("stream", r.stream);
    if (f.has("stream_options")) {
        if (!o.value("stream_options").isObject()) return badField("stream_options", "must be an object").error();
        Fields(o.value("stream_options").toObject()).boolean("include_usage", r.includeUsage);
    }
    if (f.error) return f.error;
    if (auto e = readStop(o, g.stop)) return e;
    if (auto e = readLogitBias(o, s.logitBias)) return e;
    return refuseUnsupported(kind, f, o);
}

}  // namespace

QJsonObject errorBody(const ApiError& e) {
    const auto orNull = [](const std::string& s) {
        return s.empty() ? QJsonValue() : QJsonValue(QString::fromStdString(s));
    };
    return {{"error",
             QJsonObject{{"message", QString::fromStdString(e.message)},
                         {"type", QString::fromStdString(e.type)},
                         {"param", orNull(e.param)},
                         {"code", orNull(e.code)}}}};
}

std::expected<ApiRequest, ApiError> parseApiRequest(ApiKind kind, const QByteArray& body, const ApiLimits& limits) {
    QJsonParseError parseError{};
    const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return Fail(ApiError{.message = "the body is not valid JSON: " + parseError.errorString().toStdString() +
                                 " at offset " + std::to_string(parseError.offset),
                             .code = "invalid_json"});
    if (!doc.isObject()) return Fail(ApiError{.message = "the body must be a JSON object"});
    const QJsonObject o = doc.object();
    ApiRequest r;
    r.kind = kind;
    Fields f(o);
    f.string("model", r.model);
    if (f.error) return Fail(*f.error);
    if (kind == ApiKind::Chat) {
        auto messages = readMessages(o);
        if (!messages) return std::unexpected(messages.error());
        r.messages = std::move(*messages);
    } else {
        auto prompt = readPrompt(o);
        if (!prompt) return std::unexpected(prompt.error());
        r.prompt = std::move(*prompt);
    }
    if (auto e = readGeneration(kind, o, limits, r)) return Fail(*e);
    return r;
}

}  // namespace hearth::server
