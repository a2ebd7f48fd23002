// Each reply is one streaming POST /v1/chat/completions. Every signal is queued, as the
// engine host's are: a caller stores generate()'s ticket before any of them arrives.
#include "app/remote/remote_engine.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>
#include <optional>

#include "app/remote/remote_protocol.h"

namespace hearth {

struct RemoteEngine::Stream {
    quint64 ticket = 0;
    QNetworkReply* reply = nullptr;  // deleted (deleteLater) when it ends
    QString host;  // "gpu-box:8000"
    int timeoutSeconds = 0;
    QTimer watchdog;  // restarted by every byte; firing aborts the reply as timed out
    QTimer frame;  // text goes out at most once per frame (16 ms), as the engine host sends it
    QString pending;  // text not yet sent
    QElapsedTimer sinceStart, sinceFirstText;
    double ttftMs = 0;
    int nChunks = 0;  // chunks that carried text: one token each on the servers named above
    remote::SseReader sse;
    remote::ReasoningMarkup markup;
    std::optional<remote::Usage> usage;
    QString finishReason, streamError;
    QByteArray errorBody;  // the body of an HTTP error answer
    bool sawDone = false, stopped = false, timedOut = false, gotBytes = false;
};

namespace {

int httpStatus(const QNetworkReply* r) { return r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(); }

}  // namespace

RemoteEngine::RemoteEngine(QObject* parent) : ReplyEngine(parent) {
    qRegisterMetaType<ReplyStarted>();
    qRegisterMetaType<ReplyStats>();
}

RemoteEngine::~RemoteEngine() {
    for (auto& [ticket, s] : streams_) s->reply->disconnect(this);
}

void RemoteEngine::setEndpoint(const RemoteEndpoint& endpoint) { endpoint_ = endpoint; }

QString RemoteEngine::remoteTarget() const {
    const auto base = remote::apiBase(endpoint_.baseUrl);
    return tr("%1 at %2").arg(endpoint_.model, base ? base->toString() : endpoint_.baseUrl);
}

QNetworkReply* RemoteEngine::send(const RemoteEndpoint& e, const QString& path, const QByteArray* body) {
    QNetworkRequest request(remote::endpointUrl(*remote::apiBase(e.baseUrl), path));
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    request.setAttribute(QNetworkRequest::CacheLoadControlAttribute, QNetworkRequest::AlwaysNetwork);
    if (!e.apiKey.isEmpty()) request.setRawHeader("Authorization", "Bearer " + e.apiKey.toUtf8());
    if (!body) {
        request.setTransferTimeout(e.timeoutSeconds * 1000);
        return network_.get(request);
    }
    request.setRawHeader("Accept", "text/event-stream");
    return network_.post(request, *body);
}

quint64 RemoteEngine::generate(ReplyRequest request) {
    if (request.ticket == 0) request.ticket = nextTicket_++;
    const quint64 ticket = request.ticket;
    const auto base = remote::apiBase(endpoint_.baseUrl);
    QString refusal;
    if (!base)
        refusal = tr("“%1” is not a server address. Enter one like http://gpu-box:8000 in Settings → Servers.")
                      .arg(endpoint_.baseUrl);
    else if (endpoint_.model.isEmpty())
        refusal = tr("No model of the remote server is chosen. Choose one in Settings → Servers.");
    if (!refusal.isEmpty()) {
        QMetaObject::invokeMethod(
            this, [this, ticket, refusal] { emit replyFailed(ticket, refusal + QLatin1Char(' ') + keptNote()); },
            Qt::QueuedConnection);
        return ticket;
    }
    const QByteArray body =
        QJsonDocument(remote::chatRequestBody(request, endpoint_.model)).toJson(QJsonDocument::Compact);
    auto s = std::make_unique<Stream>();
    s->ticket = ticket;
    s->host = remote::hostLabel(*base);
    s->timeoutSeconds = std::max(1, endpoint_.timeoutSeconds);
    s->reply = send(endpoint_, QStringLiteral("/chat/completions"), &body);
    s->sinceStart.start();
    s->watchdog.setSingleShot(true);
    s->watchdog.setInterval(s->timeoutSeconds * 1000);
    QNetworkReply* reply = s->reply;
    connect(&s->watchdog, &QTimer::timeout, this, [this, ticket] {
        const auto it = streams_.find(ticket);
        if (it == streams_.end()) return;
        it->second->timedOut = true;
        it->second->reply->abort();
    });
    connect(reply, &QNetworkReply::readyRead, this, [this, ticket] { onData(ticket); });
    // Queued: abort() finishes the reply inside the watchdog's or stop()'s call.
    connect(
        reply, &QNetworkReply::finished, this, [this, ticket] { onDone(ticket); }, Qt::QueuedConnection);
    s->frame.setSingleShot(true);
    s->frame.setInterval(16);
    connect(&s->frame, &QTimer::timeout, this, [this, ticket] {
        if (const auto it = streams_.find(ticket); it != streams_.end()) flush(*it->second);
    });
    s->watchdog.start();
    streams_[ticket] = std::move(s);
    QMetaObject::invokeMethod(
        this, [this, ticket] { emit replyStarted(ReplyStarted{.ticket = ticket}); }, Qt::QueuedConnection);
    return ticket;
}

void RemoteEngine::stop(quint64 ticket) {
    const auto it = streams_.find(ticket);
    if (it == streams_.end() || it->second->stopped) return;
    it->second->stopped = true;
    it->second->reply->abort();
}

void RemoteEngine::onData(quint64 ticket) {
    const auto it = streams_.find(ticket);
    if (it == streams_.end()) return;
    Stream& s = *it->second;
    const QByteArray bytes = s.reply->readAll();
    if (bytes.isEmpty() || s.stopped) return;
    s.gotBytes = true;
    s.watchdog.start();
    if (httpStatus(s.reply) >= 300) {
        s.errorBody += bytes.left(65536 - s.errorBody.size());
        return;
    }
    QString text;
    for (const QByteArray& event : s.sse.feed(bytes)) {
        if (event.trimmed() == "[DONE]") {
            s.sawDone = true;
            continue;
        }
        const remote::ChunkDelta d = remote::parseChunk(event);
        if (!d.error.isEmpty()) s.streamError = d.error;
        if (d.usage) s.usage = d.usage;
        if (!d.finishReason.isEmpty()) s.finishReason = d.finishReason;
        const QString added = s.markup.add(d.reasoning, d.content);
        if (added.isEmpty()) continue;
        if (s.nChunks++ == 0) {
            s.ttftMs = double(s.sinceStart.nsecsElapsed()) / 1e6;
            s.sinceFirstText.start();
        }
        text += added;
    }
    s.pending += text;
    if (!s.pending.isEmpty() && !s.frame.isActive()) s.frame.start();
}

void RemoteEngine::flush(Stream& s) {
    s.frame.stop();
    if (s.pending.isEmpty()) return;
    emit textReady(s.ticket, s.pending);
    s.pending.clear();
    const qint64 ms = s.sinceFirstText.elapsed();
    emit replyProgress(s.ticket, s.nChunks, ms > 0 && s.nChunks > 1 ? (s.nChunks - 1) * 1000.0 / double(ms) : 0.0);
}

void RemoteEngine::onDone(quint64 ticket) {
    const auto it = streams_.find(ticket);
    if (it == streams_.end()) return;
    Stream& s = *it->second;
    if (!s.stopped && !s.timedOut) onData(ticket);  // what came with the end
    s.watchdog.stop();
    s.reply->deleteLater();
    const int status = httpStatus(s.reply);
    QString failure;
    if (s.stopped) failure.clear();
    else if (s.timedOut)
        failure = s.gotBytes
            ? tr("%1 sent nothing for %2 seconds, so the reply was stopped.").arg(s.host).arg(s.timeoutSeconds)
            : tr("%1 did not answer within %2 seconds.").arg(s.host).arg(s.timeoutSeconds);
    else if (status >= 300) {
        QString detail = remote::errorMessage(s.errorBody + s.reply->readAll());
        if (detail.isEmpty()) detail = s.reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString();
        failure = status == 401 || status == 403
            ? tr("%1 refused the request (HTTP %2: %3). Check the API key in Settings → Servers.")
                  .arg(s.host)
                  .arg(status)
                  .arg(detail)
            : tr("%1 answered with an error (HTTP %2: %3).").arg(s.host).arg(status).arg(detail);
    } else if (s.reply->error() != QNetworkReply::NoError) failure = networkError(s);
    else if (!s.streamError.isEmpty())
        failure = tr("%1 reported an error during the reply: %2").arg(s.host, s.streamError);
    else if (!s.sawDone && s.finishReason.isEmpty())
        failure = tr("%1 ended the reply before it was complete.").arg(s.host);
    s.pending += s.markup.finish();
    flush(s);
    if (!failure.isEmpty()) {
        fail(ticket, failure);
        return;
    }
    const ReplyStats stats =
        finishedStats(s, s.stopped ? QStringLiteral("cancelled") : remote::finishReasonName(s.finishReason));
    streams_.erase(it);
    emit replyFinished(stats);
}

QString RemoteEngine::keptNote() const {
    return tr("Your message and the text so far are kept; Regenerate tries again.");
}

void RemoteEngine::fail(quint64 ticket, const QString& message) {
    streams_.erase(ticket);
    emit replyFailed(ticket, message + QLatin1Char(' ') + keptNote());
}

QString RemoteEngine::networkError(const Stream& s) const {
    switch (s.reply->error()) {
    case QNetworkReply::ConnectionRefusedError:
        return tr("Cannot reach %1: the connection was refused. Is the server running, and is the address right?")
            .arg(s.host);
    case QNetworkReply::HostNotFoundError: return tr("Cannot reach %1: no host of that name was found.").arg(s.host);
    case QNetworkReply::RemoteHostClosedError:
        return tr("%1 closed the connection before the reply was complete.").arg(s.host);
    case QNetworkReply::TimeoutError: return tr("Cannot reach %1: the connection timed out.").arg(s.host);
    default: return tr("Cannot reach %1: %2.").arg(s.host, s.reply->errorString());
    }
}

ReplyStats RemoteEngine::finishedStats(const Stream& s, const QString& reason) const {
    ReplyStats st;
    st.ticket = s.ticket;
    st.finishReason = reason;
    st.promptTokens = s.usage ? s.usage->promptTokens : 0;
    st.generatedTokens = s.usage && s.usage->completionTokens > 0 ? s.usage->completionTokens : s.nChunks;
    st.reusedTokens = s.usage ? s.usage->cachedTokens : 0;
    const qint64 ms = s.sinceFirstText.isValid() ? s.sinceFirstText.elapsed() : 0;
    st.tokensPerSecond = ms > 0 && s.nChunks > 1 ? (s.nChunks - 1) * 1000.0 / double(ms) : 0.0;
    st.ttftMs = s.ttftMs;
    st.remoteEndpoint = s.host;
    st.stored = GenerationStats{.promptTokens = st.promptTokens,
                                .generatedTokens = st.generatedTokens,
                                .prefixCacheHitTokens = st.reusedTokens,
                                .kvRestoredTokens = 0,
                                .ttftMs = st.ttftMs,
                                .prefillTokensPerSecond = 0,
                                .decodeTokensPerSecond = st.tokensPerSecond,
                                .finishReason = reason.toStdString()};
    return st;
}

void RemoteEngine::listModels(const RemoteEndpoint& e) {
    const auto base = remote::apiBase(e.baseUrl);
    if (!base) {
        const QString message = tr("“%1” is not a server address. Enter one like http://gpu-box:8000.").arg(e.baseUrl);
        QMetaObject::invokeMethod(
            this, [this, message] { emit modelsFailed(message); }, Qt::QueuedConnection);
        return;
    }
    RemoteEndpoint withTimeout = e;
    withTimeout.timeoutSeconds = std::clamp(e.timeoutSeconds, 1, 30);
    QNetworkReply* reply = send(withTimeout, QStringLiteral("/models"), nullptr);
    const QString host = remote::hostLabel(*base);
    connect(reply, &QNetworkReply::finished, this, [this, reply, host] {
        reply->deleteLater();
        const QByteArray body = reply->readAll();
        const int status = httpStatus(reply);
        if (status >= 300) {
            emit modelsFailed(
                tr("%1 answered with an error (HTTP %2: %3).").arg(host).arg(status).arg(remote::errorMessage(body)));
            return;
        }
        if (reply->error() == QNetworkReply::ConnectionRefusedError) {
            emit modelsFailed(
                tr("Cannot reach %1: the connection was refused. Is the server running, and is the address right?")
                    .arg(host));
            return;
        }
        if (reply->error() != QNetworkReply::NoError) {
            emit modelsFailed(tr("Cannot reach %1: %2.").arg(host, reply->errorString()));
            return;
        }
        const auto ids = remote::modelIds(body);
        if (!ids)
            emit modelsFailed(tr("%1 did not answer with a model list: is it an OpenAI-compatible server?").arg(host));
        else emit modelsListed(*ids);
    });
}

}  // namespace hearth
