// The window's "Local server" switch: the OpenAI-compatible server of app/server (the one
// `hearth-cli serve` runs) over the window's own engine host, on loopback at the port in the
// settings. Off at every start; stopped when switched off and when this is destroyed (quit).
//
// The window's replies are never starved by the server's clients: the server admits at most
// kParallel of its requests into the engine at once (its AdmissionGate queues the rest), below
// the engine's own limit of running sequences (SchedulerConfig::maxRunning, 16), so a window
// reply is admitted at once; and each step decodes one token of every running sequence, with
// prefill chunks within a token budget on top, so the window's reply advances every step.
// GUI thread only.
#pragma once

#include <QObject>
#include <QString>
#include <memory>

#include "app/chat/app_settings.h"
#include "app/chat/model_controller.h"

namespace hearth {

namespace server {
class ApiServer;
}

class LocalServerController : public QObject {
    Q_OBJECT
public:
    static constexpr int kParallel = 4;  // server requests decoding together
    static constexpr int kDefaultPort = 8080;

    LocalServerController(EngineHost& host, const ModelController& models, AppSettings& settings,
                          QObject* parent = nullptr);
    ~LocalServerController() override;  // stops the server

    bool running() const { return server_ != nullptr; }
    QString address() const;  // "http://127.0.0.1:8080" while running; empty otherwise
    int port() const;  // the settings' port (0: any free one)
    QString error() const { return error_; }  // why the last start failed

    // Listens on 127.0.0.1:port (remembered in the settings); false with error() when the port
    // cannot be bound. Requests get 503 until a model is loaded.
    bool start(int port);
    void stop();

signals:
    void stateChanged(bool running);

private:
    void serveModel(const LoadedModel& model);

    EngineHost& host_;
    const ModelController& models_;
    AppSettings& settings_;
    std::unique_ptr<server::ApiServer> server_;
    int boundPort_ = 0;
    QString error_;
};

}  // namespace hearth
