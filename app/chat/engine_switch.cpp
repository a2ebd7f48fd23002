// Both engines' signals pass through unchanged: tickets are this switch's, so they never clash.
#include "app/chat/engine_switch.h"

namespace hearth {

EngineSwitch::EngineSwitch(ReplyEngine& local, RemoteController& remote, QObject* parent)
    : ReplyEngine(parent), local_(local), remote_(remote) {
    forward(local_);
    forward(remote_.engine());
}

void EngineSwitch::forward(ReplyEngine& e) {
    connect(&e, &ReplyEngine::replyStarted, this, &ReplyEngine::replyStarted);
    connect(&e, &ReplyEngine::textReady, this, &ReplyEngine::textReady);
    connect(&e, &ReplyEngine::replyProgress, this, &ReplyEngine::replyProgress);
    connect(&e, &ReplyEngine::replyFinished, this, [this](const ReplyStats& s) {
        ended(s.ticket);
        emit replyFinished(s);
    });
    connect(&e, &ReplyEngine::replyFailed, this, [this](quint64 ticket, const QString& message) {
        ended(ticket);
        emit replyFailed(ticket, message);
    });
}

quint64 EngineSwitch::generate(ReplyRequest request) {
    if (request.ticket == 0) request.ticket = nextTicket_++;
    ReplyEngine& engine = remote_.active() ? static_cast<ReplyEngine&>(remote_.engine()) : local_;
    engineOf_[request.ticket] = &engine;
    return engine.generate(std::move(request));
}

void EngineSwitch::stop(quint64 ticket) {
    const auto it = engineOf_.find(ticket);
    if (it != engineOf_.end()) it->second->stop(ticket);
}

QString EngineSwitch::remoteTarget() const { return remote_.active() ? remote_.engine().remoteTarget() : QString(); }

QString EngineSwitch::remoteModel() const { return remote_.active() ? remote_.settings().model : QString(); }

}  // namespace hearth
