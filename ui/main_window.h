// The main window: the conversation sidebar and the message view, wired to the conversation
// controller; the composer and the status line, wired to the reply controller; the model picker
// and its load progress (cancellable), wired to the model controller; the settings panel, wired
// to the settings controller; a menu (new chat, model, settings, conversation export and import,
// quit) and keyboard shortcuts (Ctrl+N, Ctrl+F, Ctrl+,, Ctrl+O, Ctrl+L, Ctrl+Q, Esc).
#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QProgressDialog>
#include <functional>

class QLabel;
class QStackedWidget;
class QToolButton;

namespace hearth {

class ChatStatus;
class Composer;
class ConversationController;
class ConversationSidebar;
class DocumentsUi;
class LocalServerController;
class FirstStartPage;
class WelcomePage;
class MessageView;
class RemoteController;
class ModelController;
class ReplyController;
class SettingsController;
class TransferActions;
struct LoadedModel;
struct ReplyStarted;

// The controllers the window talks to (app/chat); it talks to nothing else below ui/.
struct WindowControllers {
    ConversationController& conversations;
    ReplyController& replies;
    SettingsController& settings;
    ModelController& models;
    RemoteController* remote = nullptr;  // null: no remote endpoints (the Servers tab without them)
    LocalServerController* localServer = nullptr;  // null: no local server switch
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const WindowControllers& controllers, QWidget* parent = nullptr);

    // Loads a model on the engine thread behind a progress dialog with Cancel.
    void loadModel(const QString& path);
    void openSettings();
    void openModelPicker();
    QProgressDialog* loadProgress() const { return progress_; }
    MessageView* messageView() const { return view_; }
    Composer* composer() const { return composer_; }
    ConversationSidebar* sidebar() const { return sidebar_; }
    // Conversation export and import (the Hearth menu's and the sidebar's), with their file seam.
    TransferActions* transfers() const { return transfers_; }
    DocumentsUi* documents() const { return documents_; }  // attached documents, drops, cited sources
    // The chat area shows one of these instead of an empty message list: the first-start page
    // while no model is loaded or loading, the welcome page in a new, empty chat.
    FirstStartPage* firstStartPage() const { return firstStart_; }
    WelcomePage* welcomePage() const { return welcome_; }
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
    void buildMenu();
    void showOpenedConversation();
    void connectConversations();
    void connectReplies();
    void connectModels();
    void showLoadProgress(const QString& path);
    void onDelegateAction(int action, const QModelIndex& index);
    void onModelLoaded(const LoadedModel& model);
    void showEngine();  // the header and status line for where replies run: the remote server or the model
    void onLoadEnded(const QString& error, const QString& summary);
    void closeProgress();
    void onReplyStarted(const ReplyStarted& info);
    void updateTitle();
    void updateChatPage();

    ConversationController& conversations_;
    ReplyController& replies_;
    SettingsController& settings_;
    ModelController& models_;
    RemoteController* remote_;
    LocalServerController* localServer_;
    ConversationSidebar* sidebar_;
    MessageView* view_;
    Composer* composer_;
    ChatStatus* status_;
    QToolButton* modelButton_;
    QLabel* contextNotice_;
    QStackedWidget* chatArea_;
    FirstStartPage* firstStart_;
    WelcomePage* welcome_;
    bool loading_ = false;  // a model load is in flight
    TransferActions* transfers_;
    DocumentsUi* documents_;
    QPointer<QProgressDialog> progress_;
    std::function<QString(const QString&)> chooseCopyPath_;
};

}  // namespace hearth
