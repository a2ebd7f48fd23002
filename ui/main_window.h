// The main window: the conversation sidebar, the message view, the composer and the status
// line, wired to the chat controller; the model picker and its load progress (cancellable),
// wired to the model controller;
// the settings panel; keyboard shortcuts (Ctrl+N, Ctrl+F, Ctrl+,, Ctrl+O, Ctrl+L, Esc).
#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QProgressDialog>
#include <functional>

class QLabel;
class QToolButton;

namespace hearth {

class AppSettings;
class ChatController;
class ChatStatus;
class Composer;
class ConversationSidebar;
class MessageView;
class ModelController;
struct LoadedModel;
struct ReplyStarted;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(ChatController& controller, ModelController& models, AppSettings& settings, QWidget* parent = nullptr);

    // Loads a model on the engine thread behind a progress dialog with Cancel.
    void loadModel(const QString& path);
    void openSettings();
    void openModelPicker();
    QProgressDialog* loadProgress() const { return progress_; }
    MessageView* messageView() const { return view_; }
    Composer* composer() const { return composer_; }
    ConversationSidebar* sidebar() const { return sidebar_; }
    // Where "Save a copy…" writes the database: a file dialog, or what tests inject (given the
    // suggested path; an empty answer cancels).
    void setCopyPathChooser(std::function<QString(const QString& suggested)> chooser) {
        chooseCopyPath_ = std::move(chooser);
    }
    void saveDatabaseCopy();

signals:
    void settingsDialogOpened(QWidget* dialog);  // tests drive the modal dialog through this

private:
    void buildLayout();
    void buildShortcuts();
    void connectController();
    void connectModels();
    void showLoadProgress(const QString& path);
    void onDelegateAction(int action, const QModelIndex& index);
    void onModelLoaded(const LoadedModel& model);
    void onLoadEnded(const QString& error);
    void closeProgress();
    void onReplyStarted(const ReplyStarted& info);
    void updateTitle();

    ChatController& controller_;
    ModelController& models_;
    AppSettings& settings_;
    ConversationSidebar* sidebar_;
    MessageView* view_;
    Composer* composer_;
    ChatStatus* status_;
    QToolButton* modelButton_;
    QLabel* contextNotice_;
    QPointer<QProgressDialog> progress_;
    std::function<QString(const QString&)> chooseCopyPath_;
};

}  // namespace hearth
