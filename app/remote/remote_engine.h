// A reply engine on a remote OpenAI-compatible server (vLLM, SGLang, llama.cpp's llama-server,
// another Hearth): the same ReplyEngine seam as the local engine host, so the window streams,
// stops and regenerates the same way. Requests go out with Qt Network as streaming chat
// completions (remote_protocol.h); text comes back at most once per frame (16 ms), never per
// token, as the engine host sends it; reasoning_content inside a "<think>" span. Nothing is kept on this side but the text: there
// is no local KV for a remote reply (ReplyStats::remoteEndpoint says where it ran).
// Errors come back as replyFailed in plain words: the server cannot be reached, it answered
// with an error, or it sent nothing for timeoutSeconds (before the first byte or mid-stream).
// The API key goes out only as "Authorization: Bearer" and is never logged. GUI thread only.
#pragma once

#include <QNetworkAccessManager>
#include <QStringList>
#include <map>
#include <memory>

#include "app/engine_host/reply_engine.h"

class QNetworkReply;

namespace hearth {

struct RemoteEndpoint {
    QString baseUrl;  // as typed: "http://gpu-box:8000" or ".../v1"
    QString model;  // an id from the server's GET /v1/models
    QString apiKey = {};  // empty: none sent
    int timeoutSeconds = 120;  // the longest wait for the next byte (a big prompt's first token may be slow)
};

class RemoteEngine : public ReplyEngine {
    Q_OBJECT
public:
    explicit RemoteEngine(QObject* parent = nullptr);
    ~RemoteEngine() override;

    void setEndpoint(const RemoteEndpoint& endpoint);  // for the next reply; one in flight keeps its own
    const RemoteEndpoint& endpoint() const { return endpoint_; }

    quint64 generate(ReplyRequest request) override;
    void stop(quint64 ticket) override;
    QString remoteTarget() const override;  // "MODEL at URL"

    // GET /v1/models on endpoint (its baseUrl and apiKey): modelsListed or modelsFailed.
    void listModels(const RemoteEndpoint& endpoint);

signals:
    void modelsListed(const QStringList& ids);
    void modelsFailed(const QString& message);

private:
    struct Stream;
    QNetworkReply* send(const RemoteEndpoint& e, const QString& path, const QByteArray* body);
    void onData(quint64 ticket);
    void onDone(quint64 ticket);
    void flush(Stream& s);  // the pending text and the progress
    void fail(quint64 ticket, const QString& message);
    QString keptNote() const;  // what every failure adds: nothing was lost
    QString networkError(const Stream& s) const;
    ReplyStats finishedStats(const Stream& s, const QString& reason) const;

    QNetworkAccessManager network_;
    RemoteEndpoint endpoint_;
    std::map<quint64, std::unique_ptr<Stream>> streams_;
    quint64 nextTicket_ = 1;
};

}  // namespace hearth
