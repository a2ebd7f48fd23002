// The model the engine runs: loading it with the engine settings (progress, cancel), reloading
// it when settings that need a reload change, and which one is loaded. The window's widgets
// talk to this, never to the engine host. GUI thread only.
#pragma once

#include <QObject>
#include <optional>

#include "app/chat/app_settings.h"
#include "app/engine_host/engine_host.h"

namespace hearth {

class ModelController : public QObject {
    Q_OBJECT
public:
    ModelController(EngineHost& host, AppSettings& settings, QObject* parent = nullptr);

    const std::optional<LoadedModel>& model() const { return model_; }
    const QString& loadingPath() const { return loadingPath_; }  // the latest load asked for

    // Loads path on the engine thread with the current engine settings; the model loaded
    // until then stays until the new one is ready. Starts with loadStarted, ends in loaded,
    // failed or cancelled.
    void load(const QString& path);
    void cancel();
    // The loaded model again when the engine settings changed from `before` in a way that
    // needs it (context length, threads, KV type, backend). True when a reload started.
    bool reloadIfNeeded(const EngineSettings& before);

signals:
    void loadStarted(const QString& path);
    void progress(int percent);
    void loaded(const hearth::LoadedModel& model);  // model() is already the new one
    void failed(const QString& message, const QString& summary);  // EngineWorker::loadFailed's
    void cancelled();

private:
    EngineHost& host_;
    AppSettings& settings_;
    std::optional<LoadedModel> model_;
    QString loadingPath_;
};

}  // namespace hearth
