// The local server's response objects in OpenAI's shapes: chat.completion and
// text_completion, their streamed chunks, usage and log-probabilities. Stateful per reply
// (the completion API's text offsets); used by the client's thread only.
#pragma once

#include <QJsonObject>
#include <string>
#include <vector>

#include "app/server/api_request.h"
#include "app/server/reply_stream.h"

namespace hearth::server {

class ReplyFormat {
public:
    // id: "chatcmpl-..." or "cmpl-..."; created: Unix seconds; model: the name reported.
    ReplyFormat(const ApiRequest& request, std::string id, qint64 created, std::string model);

    // Streaming. Chat's first chunk names the role (empty for completions: no such chunk).
    QJsonObject firstChunk() const;
    // A chunk for one item: its text, its log-probability, and at the end the finish reason.
    QJsonObject chunk(const StreamItem& item);
    // stream_options.include_usage: the chunk after the last, with usage and no choices.
    QJsonObject usageChunk(const Usage& usage) const;

    // Not streaming: the whole reply.
    QJsonObject whole(const std::vector<StreamItem>& items, const Usage& usage);

private:
    QJsonObject envelope(const char* object) const;
    QJsonObject logprobsOf(const std::vector<const StreamItem*>& items);

    ApiKind kind_;
    bool logprobs_, includeUsage_;
    QString id_, model_;
    qint64 created_;
    qint64 textOffset_ = 0;  // bytes of completion text so far (the completion API's text_offset)
};

QJsonObject usageJson(const Usage& usage);

}  // namespace hearth::server
