// ApiServer is built anew for each start (its stop joins its threads for good).
#include "app/chat/local_server_controller.h"

#include <QFileInfo>

#include "app/common/error_text.h"
#include "app/server/api_server.h"

namespace hearth {

LocalServerController::LocalServerController(EngineHost& host, const ModelController& models, AppSettings& settings,
                                             QObject* parent)
    : QObject(parent), host_(host), models_(models), settings_(settings) {
    connect(&models_, &ModelController::loaded, this, &LocalServerController::serveModel);
}

LocalServerController::~LocalServerController() { stop(); }

int LocalServerController::port() const {
    return std::clamp(settings_.raw().value("server/port", kDefaultPort).toInt(), 0, 65535);
}

QString LocalServerController::address() const {
    return running() ? QStringLiteral("http://127.0.0.1:%1").arg(boundPort_) : QString();
}

bool LocalServerController::start(int port) {
    stop();
    settings_.raw().setValue("server/port", port);
    auto server = std::make_unique<server::ApiServer>(
        host_, server::ServerOptions{.host = "127.0.0.1", .port = port, .apiKey = {}, .parallel = kParallel});
    const auto bound = server->bind();
    if (!bound) {
        error_ = tr("The local server cannot listen on port %1: %2").arg(port).arg(describe(bound.error()));
        emit stateChanged(false);
        return false;
    }
    error_.clear();
    boundPort_ = *bound;
    server->start();
    server_ = std::move(server);
    if (models_.model()) serveModel(*models_.model());
    emit stateChanged(true);
    return true;
}

void LocalServerController::stop() {
    if (!server_) return;
    server_->stop();
    server_.reset();
    boundPort_ = 0;
    emit stateChanged(false);
}

void LocalServerController::serveModel(const LoadedModel& m) {
    if (server_)
        server_->setModel(
            {QFileInfo(m.file.path).completeBaseName().toStdString(), {m.contextLength, m.file.defaults.sampling}});
}

}  // namespace hearth
