// The OpenAI chat-completions protocol as Hearth's remote engine speaks it (vLLM, SGLang,
// llama.cpp's llama-server, Hearth's own server): the API base from what a user types, the
// request body from a ReplyRequest, server-sent events, streamed chunks, error objects and
// the model list. Pure functions over Qt's JSON; no network, no user-visible words.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <optional>

#include "app/engine_host/reply_types.h"

namespace hearth::remote {

// "http://gpu-box:8000", "http://gpu-box:8000/" and "http://gpu-box:8000/v1" all give
// "http://gpu-box:8000/v1". nullopt when it is not an http(s) URL with a host.
std::optional<QUrl> apiBase(const QString& typed);
QUrl endpointUrl(const QUrl& apiBase, const QString& path);  // apiBase + "/chat/completions", ...
QString hostLabel(const QUrl& url);  // "gpu-box:8000", for messages and the status line

// The streaming chat request: the system prompt first (when set), the turns (an assistant
// turn's reasoning left out: models are trained on answers), and the sampling settings in the
// protocol's fields — max_tokens, temperature, top_p, top_k and min_p (those off are left out),
// presence_penalty, frequency_penalty, repeat_penalty and repetition_penalty (llama.cpp's and
// vLLM's names; only when not 1), seed (only a fixed one), stop. Logit bias is not sent: token
// ids belong to one vocabulary, and the remote model's is not the local one's.
QJsonObject chatRequestBody(const ReplyRequest& request, const QString& model);

// Splits a byte stream of server-sent events into the data of each event (WHATWG HTML,
// "server-sent events": lines ending in LF or CRLF, an empty line ends an event, "data:"
// lines joined by LF, comments and other fields ignored).
class SseReader {
public:
    QList<QByteArray> feed(const QByteArray& bytes);  // the events completed by these bytes

private:
    QByteArray buffer_;  // an incomplete line
    QByteArray data_;  // the event being read
    bool hasData_ = false;
};

struct Usage {
    int promptTokens = 0, completionTokens = 0, cachedTokens = 0;
};

// One chunk of a streamed reply (a data payload other than "[DONE]").
struct ChunkDelta {
    QString content;  // choices[0].delta.content
    QString reasoning;  // choices[0].delta.reasoning_content (DeepSeek, vLLM, llama-server)
    QString finishReason;  // choices[0].finish_reason when set
    std::optional<Usage> usage;  // with stream_options.include_usage, in the last chunk
    QString error;  // an error object sent mid-stream, or a chunk that is not JSON
};
ChunkDelta parseChunk(const QByteArray& data);

// Reasoning deltas as the window shows a thinking model's reply: wrapped in the default
// "<think>" ... "</think>" span (engine/tokenizer/reasoning.h) before the answer.
class ReasoningMarkup {
public:
    QString add(const QString& reasoning, const QString& content);  // the text to append
    QString finish();  // closes a span still open (a reply cut off while reasoning)

private:
    enum class State { Before, Reasoning, Answer } state_ = State::Before;
};

// The message of an OpenAI error object ({"error": {"message": ...}}), or of llama.cpp's and
// others' variants; the body's first line when it is not JSON; empty when there is none.
QString errorMessage(const QByteArray& body);
// The ids of GET /v1/models ({"data": [{"id": ...}]}); nullopt when the body is not that.
std::optional<QStringList> modelIds(const QByteArray& body);
// The protocol's finish reason as ReplyStats names it: "stop" -> "eos", others kept.
QString finishReasonName(const QString& protocolReason);

}  // namespace hearth::remote
