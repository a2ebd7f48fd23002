// The seam the window's reply controller talks to: something that turns a ReplyRequest into a
// streamed reply. The local engine host (engine_host.h) is one; a remote OpenAI-compatible
// endpoint (app/remote/remote_engine.h) is another. Signals arrive on the GUI thread; every
// one carries the ticket that generate() returned, and each reply ends in exactly one of
// replyFinished (its text complete, or stopped: finishReason "cancelled") or replyFailed.
#pragma once

#include <QObject>
#include <QString>

#include "app/engine_host/reply_types.h"

namespace hearth {

class ReplyEngine : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    ~ReplyEngine() override;

    // Starts a reply; returns its ticket (request.ticket when that is non-zero). GUI thread.
    virtual quint64 generate(ReplyRequest request) = 0;
    // Ends the reply at the next step (or chunk): replyFinished with "cancelled" and the text so far.
    virtual void stop(quint64 ticket) = 0;
    // Where the next reply runs when that is not this machine's engine: "MODEL at URL", for the
    // conversation's record. Empty: the local engine (the default).
    virtual QString remoteTarget() const { return {}; }
    // The remote server's model name alone (a reply's label); empty: the local engine.
    virtual QString remoteModel() const { return {}; }

signals:
    void replyStarted(const hearth::ReplyStarted& info);
    void textReady(quint64 ticket, const QString& text);  // a batch of reply text
    void replyProgress(quint64 ticket, int generatedTokens, double tokensPerSecond);
    void replyFinished(const hearth::ReplyStats& stats);
    void replyFailed(quint64 ticket, const QString& message);
};

}  // namespace hearth
