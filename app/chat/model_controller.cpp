// Loading goes through the engine host's queued calls; the worker's signals arrive here on the
// GUI thread, and the remembered model is updated before anyone hears of it.
#include "app/chat/model_controller.h"

#include "app/chat/backend_choices.h"

namespace hearth {

ModelController::ModelController(EngineHost& host, AppSettings& settings, QObject* parent)
    : QObject(parent), host_(host), settings_(settings) {
    EngineWorker* w = host_.worker();
    connect(w, &EngineWorker::loadProgress, this, &ModelController::progress);
    connect(w, &EngineWorker::modelLoaded, this, [this](const LoadedModel& m) {
        model_ = m;
        settings_.setLastModel(m.file.path);
        emit loaded(m);
    });
    connect(w, &EngineWorker::loadFailed, this, &ModelController::failed);
    connect(w, &EngineWorker::loadCancelled, this, &ModelController::cancelled);
}

void ModelController::load(const QString& path) {
    loadingPath_ = path;
    emit loadStarted(path);
    const EngineSettings e = settings_.engine();
    host_.loadModel(path, LoadOptions{.contextLength = e.contextLength,
                                      .threads = e.threads,
                                      .kvType = e.kvType,
                                      .backend = backendKindFor(e.backend)});
}

void ModelController::cancel() { host_.cancelLoad(); }

bool ModelController::reloadIfNeeded(const EngineSettings& before) {
    if (!model_ || !needsReload(before, settings_.engine())) return false;
    load(model_->file.path);
    return true;
}

}  // namespace hearth
