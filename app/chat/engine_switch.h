// The reply engine the window's reply controller uses: the local engine host, or the remote
// endpoint while the remote controller is active. Chosen per reply when it starts; a reply in
// flight ends on the engine it began on (its stop goes there too). GUI thread only.
#pragma once

#include <map>

#include "app/chat/remote_controller.h"
#include "app/engine_host/reply_engine.h"

namespace hearth {

class EngineSwitch : public ReplyEngine {
    Q_OBJECT
public:
    EngineSwitch(ReplyEngine& local, RemoteController& remote, QObject* parent = nullptr);

    quint64 generate(ReplyRequest request) override;
    void stop(quint64 ticket) override;
    QString remoteTarget() const override;
    QString remoteModel() const override;

private:
    void forward(ReplyEngine& engine);
    void ended(quint64 ticket) { engineOf_.erase(ticket); }

    ReplyEngine& local_;
    RemoteController& remote_;
    std::map<quint64, ReplyEngine*> engineOf_;  // replies in flight
    quint64 nextTicket_ = 1;  // one numbering for both engines
};

}  // namespace hearth
