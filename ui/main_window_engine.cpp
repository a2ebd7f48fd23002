// The main window's side of model loading (the model controller's progress in a dialog with
// Cancel), the model picker and the settings dialog.
#include <QApplication>
#include <QFileInfo>
#include <QProgressDialog>
#include <QToolButton>

#include "app/chat/backend_choices.h"
#include "app/chat/conversation_controller.h"
#include "app/chat/model_controller.h"
#include "app/chat/remote_controller.h"
#include "app/chat/settings_controller.h"
#include "app/common/paths.h"
#include "app/models/model_catalog.h"
#include "ui/appearance.h"
#include "ui/chat_status.h"
#include "ui/composer.h"
#include "ui/main_window.h"
#include "ui/model_picker.h"
#include "ui/servers_page.h"
#include "ui/settings_dialog.h"

namespace hearth {

void MainWindow::connectModels() {
    connect(&models_, &ModelController::loadStarted, this, &MainWindow::showLoadProgress);
    connect(&models_, &ModelController::progress, this, [this](int percent) {
        if (progress_) progress_->setValue(percent);
    });
    connect(&models_, &ModelController::loaded, this, &MainWindow::onModelLoaded);
    connect(&models_, &ModelController::failed, this,
            [this](const QString& message, const QString& summary) { onLoadEnded(message, summary); });
    connect(&models_, &ModelController::cancelled, this, [this] { onLoadEnded({}, {}); });
    if (!remote_) return;
    connect(remote_, &RemoteController::changed, this, &MainWindow::showEngine);
    if (remote_->active()) showEngine();
}

void MainWindow::loadModel(const QString& path) { models_.load(path); }

void MainWindow::showLoadProgress(const QString& path) {
    closeProgress();
    loading_ = true;
    updateChatPage();
    progress_ = new QProgressDialog(tr("Loading %1…").arg(QFileInfo(path).fileName()), tr("Cancel"), 0, 100, this);
    progress_->setObjectName("loadProgress");
    progress_->setWindowTitle(tr("Loading model — Hearth"));
    progress_->setMinimumDuration(250);  // no flash for a quick load
    progress_->setAutoClose(false);
    progress_->setAutoReset(false);
    progress_->setValue(0);
    connect(progress_, &QProgressDialog::canceled, &models_, &ModelController::cancel);
    status_->setMessage(tr("Loading %1…").arg(QFileInfo(path).fileName()));
}

// The progress dialog took the activation; give it back so that shortcuts work at once.
void MainWindow::closeProgress() {
    if (!progress_) return;
    if (progress_->isActiveWindow()) activateWindow();
    progress_->hide();
    progress_->deleteLater();
}

void MainWindow::onModelLoaded(const LoadedModel&) {
    closeProgress();
    loading_ = false;
    // What no longer holds with this model: a load error, old turns left out of a smaller context
    // (the next reply says again if some still are).
    conversations_.clearNotices(QStringLiteral("load"));
    contextNotice_->hide();
    showEngine();
    composer_->focusInput();
}

void MainWindow::showEngine() {
    if (remote_ && remote_->active()) {
        RemoteSettings r = remote_->settings();
        if (r.model.isEmpty()) r.model = tr("no model chosen");
        modelButton_->setText(tr("%1 (remote) ▾").arg(r.model));
        modelButton_->setToolTip(tr("Replies run on the server at %1").arg(r.baseUrl));
        status_->setRemote(r.model, r.baseUrl);
        composer_->setReady(true);
        updateChatPage();
        return;
    }
    if (!models_.model()) {
        modelButton_->setText(tr("No model loaded"));
        modelButton_->setToolTip({});
        status_->setMessage(tr("No model loaded. Choose one with Model… (Ctrl+O)."));
        composer_->setReady(false);
        updateChatPage();
        return;
    }
    const LoadedModel& model = *models_.model();
    modelButton_->setText(model.file.chatTuned ? tr("%1 ▾").arg(model.file.name)
                                               : tr("%1 (base model) ▾").arg(model.file.name));
    modelButton_->setToolTip(
        tr("%1 · %2 · %3 · context %4 · %5 chat format")
            .arg(model.file.architecture, model.file.quantization, formatBytes(model.file.fileBytes))
            .arg(model.contextLength)
            .arg(model.file.chatFormat) +
        (model.file.chatTuned ? QString()
                              : QStringLiteral("\n") +
                 tr("A base model, not tuned for chat: it continues "
                    "text rather than answering.")));
    status_->setModel(model);
    status_->setContext(conversations_.contextUsed(), model.contextLength);
    composer_->setReady(true);
    updateChatPage();
}

// error empty: cancelled (the previous model, if any, stays loaded). The notice leads with the
// plain summary; the technical line is behind its "Details…".
void MainWindow::onLoadEnded(const QString& error, const QString& summary) {
    closeProgress();
    loading_ = false;
    const bool haveModel = models_.model().has_value();
    // No model yet and none at the path asked for (the first start, or the last model moved away):
    // the first-start page says what to do; an error about a file nobody chose would not.
    if (!haveModel && !QFileInfo::exists(models_.loadingPath())) {
        status_->setMessage(tr("No model loaded"));
        updateChatPage();
        return;
    }
    if (error.isEmpty()) {
        status_->setMessage(haveModel ? tr("Loading cancelled; %1 is still loaded.").arg(models_.model()->file.name)
                                      : tr("Loading cancelled. Choose a model with Model… (Ctrl+O)."));
        return;
    }
    status_->setMessage(tr("Cannot load the model"));
    conversations_.showError(tr("Cannot load %1: %2\n\nChoose another model with **Model…** (Ctrl+O).")
                                 .arg(QFileInfo(models_.loadingPath()).fileName(), summary),
                             {}, QStringLiteral("load"), error);
    updateChatPage();
}

void MainWindow::openModelPicker() {
    auto* catalog = findChild<ModelCatalog*>(QString(), Qt::FindDirectChildrenOnly);  // kept: rescans are incremental
    if (!catalog) catalog = new ModelCatalog(ModelCatalog::userOptions(), this);
    const EngineSettings engine = settings_.engine();
    catalog->setMemoryOptions({.contextLength = engine.contextLength,
                               .kvType = parseKvElementType(engine.kvType.toStdString()).value_or(KvElementType::F16),
                               .gpuFreeBytes = gpuMemoryForModels(engine.backend)});
    ModelPicker picker(*catalog, models_.model() ? models_.model()->file.path : models_.loadingPath(), this);
    emit settingsDialogOpened(&picker);
    if (picker.exec() == QDialog::Accepted && !picker.selectedPath().isEmpty()) loadModel(picker.selectedPath());
}

void MainWindow::openSettings() {
    const SettingsValues current{settings_.conversationSettings(), settings_.engine(), settings_.language(),
                                 settings_.appearance()};
    SettingsDialog dialog(settings_, current, settings_.defaultSettings(), this);
    if (models_.model()) {
        dialog.setThinkingMode(models_.model()->thinking);
        dialog.setModel(models_.model()->file);
    }
    ServersPage* servers = nullptr;
    if (remote_ || localServer_) {
        servers = new ServersPage(localServer_, remote_);
        servers->setObjectName("serversPage");
        dialog.addPage(servers, tr("Servers"));
    }
    emit settingsDialogOpened(&dialog);
    if (dialog.exec() != QDialog::Accepted) return;
    if (servers) servers->apply();
    const SettingsValues v = dialog.values();
    if (dialog.resetRequested() && v.chat == settings_.defaultSettings()) settings_.resetConversationSettings();
    else settings_.setConversationSettings(v.chat);
    settings_.setLanguage(v.language);
    if (v.appearance != current.appearance) {
        settings_.setAppearance(v.appearance);
        applyAppearance(*qApp, v.appearance);
    }
    settings_.setEngine(v.engine);  // the disk budget at once, a reload when one is needed
}

}  // namespace hearth
