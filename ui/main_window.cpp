// Composition of the window's parts; the parts hold their own logic (the controllers in app/chat/).
#include "ui/main_window.h"

#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QProgressDialog>
#include <QShortcut>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "app/chat/conversation_controller.h"
#include "app/chat/model_controller.h"
#include "app/chat/remote_controller.h"
#include "app/chat/reply_controller.h"
#include "app/common/paths.h"
#include "app/models/model_sources.h"
#include "ui/appearance.h"
#include "ui/chat_status.h"
#include "ui/composer.h"
#include "ui/conversation_sidebar.h"
#include "ui/details_dialog.h"
#include "ui/documents_ui.h"
#include "ui/message_view.h"
#include "ui/model_picker.h"
#include "ui/settings_dialog.h"
#include "ui/start_pages.h"
#include "ui/transfer_actions.h"

namespace hearth {

MainWindow::MainWindow(const WindowControllers& controllers, QWidget* parent)
    : QMainWindow(parent),
      conversations_(controllers.conversations),
      replies_(controllers.replies),
      settings_(controllers.settings),
      models_(controllers.models),
      remote_(controllers.remote),
      localServer_(controllers.localServer),
      sidebar_(new ConversationSidebar(controllers.conversations)),
      view_(new MessageView),
      composer_(new Composer),
      status_(new ChatStatus),
      modelButton_(new QToolButton),
      contextNotice_(new QLabel),
      chatArea_(new QStackedWidget),
      firstStart_(new FirstStartPage),
      welcome_(new WelcomePage),
      transfers_(new TransferActions(controllers.conversations, this)),
      documents_(nullptr) {
    setObjectName("mainWindow");
    buildLayout();
    documents_ = new DocumentsUi(conversations_, models_, composer_, view_, this);
    buildMenu();
    buildShortcuts();
    connectConversations();
    connectReplies();
    connectModels();
    updateTitle();
    updateChatPage();
    resize(1100, 720);
}

void MainWindow::buildLayout() {
    view_->setModel(conversations_.messages());
    modelButton_->setObjectName("modelHeader");
    modelButton_->setText(tr("No model loaded"));
    modelButton_->setToolButtonStyle(Qt::ToolButtonTextOnly);
    modelButton_->setAutoRaise(true);
    contextNotice_->setObjectName("contextNotice");
    contextNotice_->setWordWrap(true);
    contextNotice_->setContentsMargins(12, 4, 12, 4);
    contextNotice_->hide();
    auto* pane = new QWidget;
    auto* layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(modelButton_, 0, Qt::AlignLeft);
    chatArea_->setObjectName("chatArea");
    chatArea_->addWidget(view_);
    chatArea_->addWidget(firstStart_);
    chatArea_->addWidget(welcome_);
    layout->addWidget(chatArea_, 1);
    layout->addWidget(contextNotice_);
    layout->addWidget(composer_);
    auto* splitter = new QSplitter;
    splitter->addWidget(sidebar_);
    splitter->addWidget(pane);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({260, 840});
    setCentralWidget(splitter);
    statusBar()->addWidget(status_, 1);
    statusBar()->setSizeGripEnabled(false);
    connect(modelButton_, &QToolButton::clicked, this, &MainWindow::openModelPicker);
    connect(sidebar_, &ConversationSidebar::settingsRequested, this, &MainWindow::openSettings);
    connect(sidebar_, &ConversationSidebar::modelPickerRequested, this, &MainWindow::openModelPicker);
    connect(firstStart_, &FirstStartPage::chooseModelRequested, this, &MainWindow::openModelPicker);
    connect(welcome_, &WelcomePage::promptChosen, this, [this](const QString& text) {
        composer_->input()->setPlainText(text);
        composer_->focusInput();
    });
    connect(sidebar_, &ConversationSidebar::exportRequested, transfers_, &TransferActions::exportConversation);
    connect(sidebar_, &ConversationSidebar::exportAllRequested, transfers_, &TransferActions::exportAll);
    connect(sidebar_, &ConversationSidebar::importRequested, transfers_, &TransferActions::importConversations);
    connect(transfers_, &TransferActions::statusMessage, statusBar(), &QStatusBar::showMessage);
}

void MainWindow::buildShortcuts() {
    auto add = [this](const QKeySequence& keys, auto slot) {
        auto* s = new QShortcut(keys, this);
        s->setContext(Qt::WindowShortcut);
        connect(s, &QShortcut::activated, this, slot);
    };
    add(QKeySequence::Find, [this] { sidebar_->focusSearch(); });
    add(QKeySequence(Qt::CTRL | Qt::Key_L), [this] { composer_->focusInput(); });
    add(QKeySequence(Qt::Key_Escape), [this] { replies_.stop(); });
}

// The actions a menu lists carry their shortcuts (a QShortcut with the same keys would make
// both ambiguous, and neither would fire).
void MainWindow::buildMenu() {
    QMenu* menu = menuBar()->addMenu(tr("&Hearth"));
    menu->setObjectName("hearthMenu");
    auto add = [this, menu](const QString& text, const QKeySequence& keys, auto slot) {
        QAction* a = menu->addAction(text);
        a->setShortcut(keys);
        a->setShortcutContext(Qt::WindowShortcut);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };
    add(tr("&New chat"), QKeySequence::New, [this] {
        conversations_.newConversation();
        composer_->focusInput();
    });
    add(tr("Choose &model…"), QKeySequence::Open, [this] { openModelPicker(); });
    add(tr("&Settings…"), QKeySequence(Qt::CTRL | Qt::Key_Comma), [this] { openSettings(); });
    menu->addSeparator();
    menu->addActions(
        {transfers_->exportConversationAction(), transfers_->exportAllAction(), transfers_->importAction()});
    menu->addSeparator();
    add(tr("&Quit"), QKeySequence(Qt::CTRL | Qt::Key_Q), [this] { close(); })->setMenuRole(QAction::QuitRole);
}

// What the status line and the composer show belongs to the conversation: the last reply's
// figures go, its context is what its last reply recorded, Regenerate needs a reply.
void MainWindow::showOpenedConversation() {
    contextNotice_->hide();
    composer_->cancelEdit();
    sidebar_->selectCurrent();
    status_->showConversation(conversations_.contextUsed(), models_.model() ? models_.model()->contextLength : 0);
    updateTitle();
}

void MainWindow::connectConversations() {
    connect(&conversations_, &ConversationController::conversationOpened, this, &MainWindow::showOpenedConversation);
    connect(&conversations_, &ConversationController::messageFocused, this,
            [this](qint64 id) { view_->showRow(conversations_.messages()->rowOfId(id)); });
    MessageListModel* messages = conversations_.messages();
    const auto updateRegenerate = [this, messages] { composer_->setHasReply(messages->hasReply()); };
    connect(messages, &QAbstractItemModel::modelReset, this, updateRegenerate);
    connect(messages, &QAbstractItemModel::rowsInserted, this, updateRegenerate);
    connect(messages, &QAbstractItemModel::rowsRemoved, this, updateRegenerate);
    connect(messages, &QAbstractItemModel::modelReset, this, &MainWindow::updateChatPage);
    connect(messages, &QAbstractItemModel::rowsInserted, this, &MainWindow::updateChatPage);
    connect(messages, &QAbstractItemModel::rowsRemoved, this, &MainWindow::updateChatPage);
    connect(conversations_.list(), &QAbstractItemModel::modelReset, this, &MainWindow::updateTitle);
    connect(view_->messageDelegate(), &MessageDelegate::actionTriggered, this,
            [this](MessageDelegate::Action a, const QModelIndex& i) { onDelegateAction(static_cast<int>(a), i); });
}

void MainWindow::connectReplies() {
    connect(composer_, &Composer::sendRequested, &replies_, &ReplyController::send);
    connect(composer_, &Composer::editRequested, &replies_, &ReplyController::editMessage);
    connect(composer_, &Composer::stopRequested, &replies_, &ReplyController::stop);
    connect(composer_, &Composer::regenerateRequested, &replies_, &ReplyController::regenerate);
    connect(&replies_, &ReplyController::generatingChanged, composer_, &Composer::setGenerating);
    connect(&replies_, &ReplyController::replyStarted, this, &MainWindow::onReplyStarted);
    connect(&replies_, &ReplyController::replyFinished, status_, &ChatStatus::replyFinished);
    connect(&replies_, &ReplyController::replyProgress, status_, &ChatStatus::replyProgress);
}

void MainWindow::onDelegateAction(int action, const QModelIndex& index) {
    const qint64 id = index.data(MessageListModel::IdRole).toLongLong();
    switch (static_cast<MessageDelegate::Action>(action)) {
    case MessageDelegate::Action::CopyCode: statusBar()->showMessage(tr("Code copied"), 2000); break;
    case MessageDelegate::Action::CopyMessage: statusBar()->showMessage(tr("Message copied"), 2000); break;
    case MessageDelegate::Action::Edit: composer_->beginEdit(id, index.data().toString()); break;
    case MessageDelegate::Action::Regenerate: replies_.regenerate(); break;
    case MessageDelegate::Action::PreviousBranch: replies_.switchBranch(id, -1); break;
    case MessageDelegate::Action::NextBranch: replies_.switchBranch(id, +1); break;
    case MessageDelegate::Action::SaveCopy: saveDatabaseCopy(); break;
    case MessageDelegate::Action::Details:
        showTechnicalDetails(this, index.data(MessageListModel::NoticeDetailsRole).toString());
        break;
    case MessageDelegate::Action::ToggleReasoning: break;  // the delegate folds it itself
    case MessageDelegate::Action::Source: break;  // DocumentsUi opens it
    case MessageDelegate::Action::Marker:
    case MessageDelegate::Action::BranchPosition: break;  // not clickable
    }
}

// The suggested place is the database's own path (the file there is gone), so that the next
// start opens the copy.
void MainWindow::saveDatabaseCopy() {
    const QString suggested = conversations_.databasePath();
    const QString path = chooseCopyPath_
        ? chooseCopyPath_(suggested)
        : QFileDialog::getSaveFileName(this, tr("Save a copy of the conversations"), suggested,
                                       tr("Hearth conversations (*.sqlite);;All files (*)"));
    if (path.isEmpty()) return;
    if (conversations_.switchToCopy(path))
        statusBar()->showMessage(tr("Conversations saved to %1; Hearth goes on with this copy.").arg(path), 8000);
}

void MainWindow::onReplyStarted(const ReplyStarted& info) {
    status_->replyStarted(info);
    contextNotice_->setVisible(info.omittedTurns > 0);
    contextNotice_->setText(
        tr("This conversation is longer than the model's context window: the %n oldest "
           "message(s) are left out of what the model sees (they stay saved here).",
           nullptr, info.omittedTurns));
}

// Messages, once there are any; before that the first-start page while there is no model (and
// none loading), else the welcome page. The folder list is read again each time it shows, as
// the settings may have added one.
void MainWindow::updateChatPage() {
    QWidget* page = view_;
    if (conversations_.messages()->rowCount() == 0) {
        if (remote_ && remote_->active()) {  // replies from a server: its model is the one in use
            const QString model = remote_->settings().model;
            welcome_->setModelName(tr("%1 (remote)").arg(model.isEmpty() ? tr("no model chosen") : model));
            page = welcome_;
        } else if (models_.model()) {
            const ModelFileInfo& file = models_.model()->file;
            welcome_->setModelName(file.chatTuned ? file.name
                                                  : tr("%1 (base model — not tuned for chat)").arg(file.name));
            page = welcome_;
        } else if (loading_) {
            welcome_->setModelName(tr("loading %1…").arg(QFileInfo(models_.loadingPath()).fileName()));
            page = welcome_;
        } else {
            if (chatArea_->currentWidget() != firstStart_)
                firstStart_->setFolders(modelSearchFolders(defaultModelSourceRoots()));
            page = firstStart_;
        }
    }
    chatArea_->setCurrentWidget(page);
}

void MainWindow::updateTitle() {
    ConversationListModel* list = conversations_.list();
    const int row = list->rowOf(conversations_.current());
    const QString title = row >= 0 ? list->index(row).data().toString() : QString();
    setWindowTitle(title.isEmpty() ? tr("Hearth") : tr("%1 — Hearth").arg(title));
}

}  // namespace hearth
