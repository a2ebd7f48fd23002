// Shapes from OpenAI's API reference: a chat chunk carries a delta, a completion chunk the
// text; chat log-probabilities are {content: [{token, logprob, bytes, top_logprobs}]}, the
// completion API's {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}.
#include "app/server/api_reply.h"

#include <QJsonArray>

namespace hearth::server {
namespace {

QString text(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QJsonArray bytesOf(const std::string& s) {
    QJsonArray a;
    for (unsigned char c : s) a.append(static_cast<int>(c));
    return a;
}

QJsonObject chatTokenJson(const std::string& token, float logprob) {
    return {{"token", text(token)}, {"logprob", static_cast<double>(logprob)}, {"bytes", bytesOf(token)}};
}

}  // namespace

QJsonObject usageJson(const Usage& u) {
    return {{"prompt_tokens", u.promptTokens},
            {"completion_tokens", u.completionTokens},
            {"total_tokens", u.promptTokens + u.completionTokens},
            {"prompt_tokens_details", QJsonObject{{"cached_tokens", u.cachedTokens}}}};
}

ReplyFormat::ReplyFormat(const ApiRequest& request, std::string id, qint64 created, std::string model)
    : kind_(request.kind),
      logprobs_(request.logprobs),
      includeUsage_(request.stream && request.includeUsage),
      id_(text(id)),
      model_(text(model)),
      created_(created) {}

QJsonObject ReplyFormat::envelope(const char* object) const {
    QJsonObject o{{"id", id_}, {"object", object}, {"created", created_}, {"model", model_}};
    if (includeUsage_) o.insert("usage", QJsonValue());
    return o;
}

QJsonObject ReplyFormat::logprobsOf(const std::vector<const StreamItem*>& items) {
    if (kind_ == ApiKind::Chat) {
        QJsonArray content;
        for (const StreamItem* item : items) {
            if (!item->logprob) continue;
            QJsonObject t = chatTokenJson(item->logprob->token, item->logprob->logprob);
            QJsonArray top;
            for (const auto& [token, lp] : item->logprob->top) top.append(chatTokenJson(token, lp));
            t.insert("top_logprobs", top);
            content.append(t);
        }
        return {{"content", content}};
    }
    QJsonArray tokens, tokenLogprobs, tops, offsets;
    for (const StreamItem* item : items) {
        if (item->logprob) {
            tokens.append(text(item->logprob->token));
            tokenLogprobs.append(static_cast<double>(item->logprob->logprob));
            QJsonObject top;
            for (const auto& [token, lp] : item->logprob->top) top.insert(text(token), static_cast<double>(lp));
            tops.append(top);
            offsets.append(textOffset_);
        }
        textOffset_ += static_cast<qint64>(item->text.size());
    }
    return {{"tokens", tokens}, {"token_logprobs", tokenLogprobs}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

QJsonObject ReplyFormat::firstChunk() const {
    if (kind_ != ApiKind::Chat) return {};
    QJsonObject o = envelope("chat.completion.chunk");
    o.insert("choices",
             QJsonArray{QJsonObject{{"index", 0},
                                    {"delta", QJsonObject{{"role", "assistant"}, {"content", ""}}},
                                    {"logprobs", QJsonValue()},
                                    {"finish_reason", QJsonValue()}}});
    return o;
}

QJsonObject ReplyFormat::chunk(const StreamItem& item) {
    const bool chat = kind_ == ApiKind::Chat;
    QJsonObject choice{{"index", 0},
                       {"finish_reason", item.finish ? QJsonValue(text(item.finishReason)) : QJsonValue()},
                       {"logprobs", logprobs_ && item.logprob ? QJsonValue(logprobsOf({&item})) : QJsonValue()}};
    if (!logprobs_ || !item.logprob) textOffset_ += static_cast<qint64>(item.text.size());
    if (chat) choice.insert("delta", item.text.empty() ? QJsonObject{} : QJsonObject{{"content", text(item.text)}});
    else choice.insert("text", text(item.text));
    QJsonObject o = envelope(chat ? "chat.completion.chunk" : "text_completion");
    o.insert("choices", QJsonArray{choice});
    return o;
}

QJsonObject ReplyFormat::usageChunk(const Usage& usage) const {
    QJsonObject o = envelope(kind_ == ApiKind::Chat ? "chat.completion.chunk" : "text_completion");
    o.insert("choices", QJsonArray{});
    o.insert("usage", usageJson(usage));
    return o;
}

QJsonObject ReplyFormat::whole(const std::vector<StreamItem>& items, const Usage& usage) {
    std::string all;
    std::string reason = "stop";
    std::vector<const StreamItem*> pointers;
    for (const StreamItem& item : items) {
        all += item.text;
        pointers.push_back(&item);
        if (item.finish) reason = item.finishReason;
    }
    const bool chat = kind_ == ApiKind::Chat;
    QJsonObject choice{{"index", 0},
                       {"finish_reason", text(reason)},
                       {"logprobs", logprobs_ ? QJsonValue(logprobsOf(pointers)) : QJsonValue()}};
    if (chat) choice.insert("message", QJsonObject{{"role", "assistant"}, {"content", text(all)}});
    else choice.insert("text", text(all));
    QJsonObject o{{"id", id_},
                  {"object", chat ? "chat.completion" : "text_completion"},
                  {"created", created_},
                  {"model", model_},
                  {"choices", QJsonArray{choice}},
                  {"usage", usageJson(usage)}};
    return o;
}

}  // namespace hearth::server
