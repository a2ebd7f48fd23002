// The main window's model loading (progress dialog with Cancel), model picker and settings.
#include <QApplication>
#include <QFileInfo>
#include <QProgressDialog>
#include <QToolButton>

#include "app/chat/backend_choices.h"
#include "app/chat/chat_controller.h"
#include "app/common/paths.h"
#include "ui/appearance.h"
#include "ui/chat_status.h"
#include "ui/composer.h"
#include "ui/main_window.h"
#include "ui/model_picker.h"
#include "ui/settings_dialog.h"

namespace hearth {

void MainWindow::connectEngine() {
    EngineWorker* w = host_.worker();
    connect(w, &EngineWorker::loadProgress, this, [this](int percent) { if (progress_) progress_->setValue(percent); });
    connect(w, &EngineWorker::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(w, &EngineWorker::loadFailed, this, [this](const QString& m) { onLoadEnded(m); });
    connect(w, &EngineWorker::loadCancelled, this, [this] { onLoadEnded(QString()); });
}

void MainWindow::loadModel(const QString& path) {
    closeProgress();
    loadingPath_ = path;
    progress_ = new QProgressDialog(tr("Loading %1…").arg(QFileInfo(path).fileName()), tr("Cancel"), 0, 100, this);
    progress_->setObjectName("loadProgress");
    progress_->setWindowTitle(tr("Loading model — Hearth"));
    progress_->setMinimumDuration(250);  // no flash for a quick load
    progress_->setAutoClose(false);
    progress_->setAutoReset(false);
    progress_->setValue(0);
    connect(progress_, &QProgressDialog::canceled, this, [this] { host_.cancelLoad(); });
    status_->setMessage(tr("Loading %1…").arg(QFileInfo(path).fileName()));
    const EngineSettings e = settings_.engine();
    bool reference = false;
    for (const BackendChoice& b : backendChoices())
        if (b.name == e.backend) reference = b.isReference();
    host_.loadModel(path, LoadOptions{e.contextLength, e.threads, e.kvType, reference});
}

// The progress dialog took the activation; give it back so that shortcuts work at once.
void MainWindow::closeProgress() {
    if (!progress_) return;
    if (progress_->isActiveWindow()) activateWindow();
    progress_->hide();
    progress_->deleteLater();
}

void MainWindow::onModelLoaded(const LoadedModel& model) {
    closeProgress();
    settings_.setLastModel(model.file.path);
    modelButton_->setText(tr("%1 ▾").arg(model.file.name));
    modelButton_->setToolTip(tr("%1 · %2 · %3 · context %4 · %5 chat format")
                                 .arg(model.file.architecture, model.file.quantization, formatBytes(model.file.fileBytes))
                                 .arg(model.contextLength)
                                 .arg(model.file.chatFormat));
    status_->setModel(model);
    composer_->setReady(true);
    composer_->focusInput();
}

// error empty: cancelled (the previous model, if any, stays loaded).
void MainWindow::onLoadEnded(const QString& error) {
    closeProgress();
    const bool haveModel = controller_.model().has_value();
    if (error.isEmpty()) {
        status_->setMessage(haveModel ? tr("Loading cancelled; %1 is still loaded.").arg(controller_.model()->file.name)
                                      : tr("Loading cancelled. Choose a model with Model… (Ctrl+O)."));
        return;
    }
    status_->setMessage(tr("Cannot load the model"));
    controller_.showError(tr("Cannot load %1: %2\n\nChoose another model with **Model…** (Ctrl+O); "
                             "the default model is fetched by `packaging/scripts/fetch-models.sh`.")
                              .arg(QFileInfo(loadingPath_).fileName(), error));
}

void MainWindow::openModelPicker() {
    ModelPicker picker(modelsDir(), controller_.model() ? controller_.model()->file.path : loadingPath_, this);
    emit settingsDialogOpened(&picker);
    if (picker.exec() == QDialog::Accepted && !picker.selectedPath().isEmpty()) loadModel(picker.selectedPath());
}

void MainWindow::openSettings() {
    const SettingsValues current{controller_.conversationSettings(), settings_.engine(), settings_.language(),
                                 settings_.raw().value("ui/appearance").toString()};
    SettingsDialog dialog(settings_, current, controller_.defaultSettings(), this);
    emit settingsDialogOpened(&dialog);
    if (dialog.exec() != QDialog::Accepted) return;
    const SettingsValues v = dialog.values();
    if (dialog.resetRequested() && v.chat == controller_.defaultSettings()) controller_.resetConversationSettings();
    else controller_.setConversationSettings(v.chat);
    settings_.setLanguage(v.language);
    if (v.appearance != current.appearance) {
        settings_.raw().setValue("ui/appearance", v.appearance);
        applyAppearance(*qApp, v.appearance);
    }
    if (v.engine == current.engine) return;
    settings_.setEngine(v.engine);  // speculation: read for each reply
    if (v.engine.kvDiskBudgetMb != current.engine.kvDiskBudgetMb) controller_.setKvDiskBudget(qint64{v.engine.kvDiskBudgetMb} << 20);
    if (needsReload(current.engine, v.engine) && controller_.model()) loadModel(controller_.model()->file.path);
}

}  // namespace hearth
