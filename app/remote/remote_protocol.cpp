// Field names follow OpenAI's chat-completions reference; reasoning_content is DeepSeek's
// field, which vLLM, SGLang and llama-server's --reasoning-format deepseek also send.
#include "app/remote/remote_protocol.h"

#include <QJsonArray>
#include <QJsonDocument>

#include "engine/tokenizer/reasoning.h"

namespace hearth::remote {

std::optional<QUrl> apiBase(const QString& typed) {
    QUrl url(typed.trimmed(), QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty()) return std::nullopt;
    if (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")) return std::nullopt;
    QString path = url.path();
    while (path.endsWith(QLatin1Char('/'))) path.chop(1);
    if (!path.endsWith(QLatin1String("/v1"))) path += QLatin1String("/v1");
    url.setPath(path);
    url.setQuery(QString());
    url.setFragment(QString());
    return url;
}

QUrl endpointUrl(const QUrl& apiBase, const QString& path) {
    QUrl url = apiBase;
    url.setPath(apiBase.path() + path);
    return url;
}

QString hostLabel(const QUrl& url) {
    return url.port() > 0 ? QStringLiteral("%1:%2").arg(url.host()).arg(url.port()) : url.host();
}

namespace {

QString answerOnly(const QString& reply) {
    const QByteArray utf8 = reply.toUtf8();
    const ReasoningSplit s = splitReasoning(std::string_view(utf8.constData(), size_t(utf8.size())), ReasoningSpan{});
    return QString::fromUtf8(s.answer.data(), static_cast<qsizetype>(s.answer.size()));
}

QJsonObject message(const char* role, const QString& content) {
    return QJsonObject{{"role", QLatin1String(role)}, {"content", content}};
}

}  // namespace

QJsonObject chatRequestBody(const ReplyRequest& r, const QString& model) {
    QJsonArray messages;
    if (!r.settings.systemPrompt.isEmpty()) messages.append(message("system", r.settings.systemPrompt));
    for (const ChatTurn& t : r.turns) {
        if (t.role == ChatRole::System) messages.append(message("system", t.content));
        else if (t.role == ChatRole::User) messages.append(message("user", t.content));
        else messages.append(message("assistant", answerOnly(t.content)));
    }
    const SamplingParams& s = r.settings.sampling;
    QJsonObject body{{"model", model},
                     {"messages", messages},
                     {"stream", true},
                     {"stream_options", QJsonObject{{"include_usage", true}}},
                     {"temperature", double(s.temperature)},
                     {"top_p", double(s.topP)},
                     {"presence_penalty", double(s.presencePenalty)},
                     {"frequency_penalty", double(s.frequencyPenalty)}};
    if (r.settings.maxTokens > 0) body["max_tokens"] = r.settings.maxTokens;
    if (s.topK > 0) body["top_k"] = s.topK;
    if (s.minP > 0) body["min_p"] = double(s.minP);
    if (s.typicalP < 1) body["typical_p"] = double(s.typicalP);
    if (s.repeatPenalty != 1.0f) {
        body["repeat_penalty"] = double(s.repeatPenalty);
        body["repetition_penalty"] = double(s.repeatPenalty);
    }
    if (r.settings.seed >= 0) body["seed"] = double(r.settings.seed);
    if (!r.settings.stop.isEmpty()) body["stop"] = QJsonArray::fromStringList(r.settings.stop);
    return body;
}

QList<QByteArray> SseReader::feed(const QByteArray& bytes) {
    QList<QByteArray> events;
    buffer_ += bytes;
    qsizetype start = 0;
    for (qsizetype nl; (nl = buffer_.indexOf('\n', start)) >= 0; start = nl + 1) {
        QByteArray line = buffer_.mid(start, nl - start);
        if (line.endsWith('\r')) line.chop(1);
        if (line.isEmpty()) {  // the end of an event
            if (hasData_) events.append(data_);
            data_.clear();
            hasData_ = false;
        } else if (line.startsWith("data:")) {
            QByteArray value = line.mid(5);
            if (value.startsWith(' ')) value.remove(0, 1);
            if (hasData_) data_ += '\n';
            data_ += value;
            hasData_ = true;
        }  // ":" comments, event:, id:, retry: carry nothing a reply needs
    }
    buffer_.remove(0, start);
    return events;
}

ChunkDelta parseChunk(const QByteArray& data) {
    ChunkDelta d;
    QJsonParseError parseError{};
    const QJsonDocument doc = QJsonDocument::fromJson(data, &parseError);
    if (!doc.isObject()) {
        d.error = QStringLiteral("a stream chunk is not JSON: %1").arg(QString::fromUtf8(data.left(120)));
        return d;
    }
    const QJsonObject o = doc.object();
    if (o.contains("error")) {
        d.error = errorMessage(data);
        if (d.error.isEmpty()) d.error = QStringLiteral("the server sent an error");
        return d;
    }
    const QJsonArray choices = o.value("choices").toArray();
    if (!choices.isEmpty()) {
        const QJsonObject c = choices.first().toObject();
        const QJsonObject delta = c.value("delta").toObject();
        d.content = delta.value("content").toString();
        d.reasoning = delta.value("reasoning_content").toString();
        if (d.reasoning.isEmpty()) d.reasoning = delta.value("reasoning").toString();  // some servers' name
        d.finishReason = c.value("finish_reason").toString();
    }
    const QJsonValue usage = o.value("usage");
    if (usage.isObject()) {
        const QJsonObject u = usage.toObject();
        d.usage = Usage{.promptTokens = u.value("prompt_tokens").toInt(),
                        .completionTokens = u.value("completion_tokens").toInt(),
                        .cachedTokens = u.value("prompt_tokens_details").toObject().value("cached_tokens").toInt()};
    }
    return d;
}

QString ReasoningMarkup::add(const QString& reasoning, const QString& content) {
    QString out;
    if (!reasoning.isEmpty()) {
        if (state_ == State::Before) out += QStringLiteral("<think>\n");
        if (state_ != State::Answer) {
            state_ = State::Reasoning;
            out += reasoning;
        }  // reasoning after the answer began has no place in the reply: dropped
    }
    if (!content.isEmpty()) {
        if (state_ == State::Reasoning) out += QStringLiteral("\n</think>\n\n");
        state_ = State::Answer;
        out += content;
    }
    return out;
}

QString ReasoningMarkup::finish() {
    if (state_ != State::Reasoning) return {};
    state_ = State::Answer;
    return QStringLiteral("\n</think>");
}

QString errorMessage(const QByteArray& body) {
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    if (doc.isObject()) {
        const QJsonValue e = doc.object().value("error");
        if (e.isObject()) return e.toObject().value("message").toString();
        if (e.isString()) return e.toString();  // {"error": "..."}: older servers
        const QJsonValue m = doc.object().value("message");  // {"message": ...}: some proxies
        if (m.isString()) return m.toString();
        const QJsonValue detail = doc.object().value("detail");  // FastAPI's own errors
        if (detail.isString()) return detail.toString();
        return {};
    }
    const QString text = QString::fromUtf8(body).trimmed();
    return text.section(QLatin1Char('\n'), 0, 0).left(200);
}

std::optional<QStringList> modelIds(const QByteArray& body) {
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    if (!doc.isObject() || !doc.object().value("data").isArray()) return std::nullopt;
    QStringList ids;
    for (const QJsonValue& m : doc.object().value("data").toArray()) {
        const QString id = m.toObject().value("id").toString();
        if (!id.isEmpty()) ids.append(id);
    }
    return ids;
}

QString finishReasonName(const QString& protocolReason) {
    if (protocolReason == QLatin1String("stop")) return QStringLiteral("eos");
    return protocolReason.isEmpty() ? QStringLiteral("eos") : protocolReason;
}

}  // namespace hearth::remote
