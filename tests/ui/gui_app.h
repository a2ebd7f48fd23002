// The GUI's objects as gui_main.cpp builds them, over a scratch folder (settings file and
// conversation database), for tests and the benchmark; destroying and rebuilding one over
// the same folder is an application restart. Also helpers that drive the window like a user.
#pragma once

#include <QAbstractButton>
#include <QDialogButtonBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTimer>
#include <QtTest>
#include <functional>
#include <memory>

#include "app/chat/app_settings.h"
#include "app/chat/conversation_controller.h"
#include "app/chat/engine_switch.h"
#include "app/chat/local_server_controller.h"
#include "app/chat/model_controller.h"
#include "app/chat/remote_controller.h"
#include "app/chat/reply_controller.h"
#include "app/chat/settings_controller.h"
#include "app/engine_host/engine_host.h"
#include "app/store/conversation_store.h"
#include "tests/support/test_env.h"
#include "tests/support/tiny_llama.h"
#include "ui/composer.h"
#include "ui/conversation_sidebar.h"
#include "ui/main_window.h"
#include "ui/message_view.h"
#include "ui/settings_dialog.h"

namespace hearth::test {

struct GuiApp {
    explicit GuiApp(const QString& dir)
        : settings(dir + "/settings.ini"),
          store(ConversationStore::open((dir + "/chats.sqlite").toStdString()).value()),
          models(std::make_unique<ModelController>(host, settings)),
          conversations(std::make_unique<ConversationController>(*store, host)),
          chatSettings(std::make_unique<SettingsController>(*conversations, *models, settings)),
          keys(std::make_unique<ApiKeyStore>(QStringLiteral("Hearth test"))),
          remote(std::make_unique<RemoteController>(settings, *keys)),
          engines(std::make_unique<EngineSwitch>(host, *remote)),
          replies(std::make_unique<ReplyController>(*conversations, *chatSettings, *models, *engines)),
          localServer(std::make_unique<LocalServerController>(host, *models, settings)),
          window(std::make_unique<MainWindow>(WindowControllers{.conversations = *conversations,
                                                                .replies = *replies,
                                                                .settings = *chatSettings,
                                                                .models = *models,
                                                                .remote = remote.get(),
                                                                .localServer = localServer.get()})) {
        window->show();
    }
    ~GuiApp() {
        window.reset();
        localServer.reset();
        replies.reset();
        engines.reset();
        remote.reset();
        keys.reset();
        chatSettings.reset();
        conversations.reset();
        models.reset();
    }
    QPlainTextEdit* input() const { return window->composer()->input(); }
    QAbstractButton* sendButton() const { return window->findChild<QAbstractButton*>("sendButton"); }
    MessageListModel* messages() const { return conversations->messages(); }
    QString rowText(int row) const { return messages()->row(row) ? messages()->row(row)->text : QString(); }

    AppSettings settings;
    std::unique_ptr<ConversationStore> store;
    EngineHost host;  // declared after the store: its thread is joined before the store closes
    std::unique_ptr<ModelController> models;
    std::unique_ptr<ConversationController> conversations;
    std::unique_ptr<SettingsController> chatSettings;
    std::unique_ptr<ApiKeyStore> keys;
    std::unique_ptr<RemoteController> remote;
    std::unique_ptr<EngineSwitch> engines;  // the local engine host or the remote server
    std::unique_ptr<ReplyController> replies;
    std::unique_ptr<LocalServerController> localServer;
    std::unique_ptr<MainWindow> window;
};

// stories260K from the shared test data, else a tiny random Llama written into dir.
inline QString smallModel(const QString& dir) {
    const QString stories = testDataFile("stories260K.gguf");
    if (QFileInfo::exists(stories)) return stories;
    const QString path = dir + "/tiny-llama.gguf";
    if (!QFileInfo::exists(path)) (void)tinyLlama().writeFile(path.toStdString());
    return path;
}

// Clicks the chip of a message row whose action matches (false when the row has none).
inline bool clickChip(MainWindow& w, int row, MessageDelegate::Action action) {
    MessageView* view = w.messageView();
    view->scrollTo(view->model()->index(row, 0));
    for (const MessageDelegate::Hit& h : view->hitsAt(row)) {
        if (h.action != action) continue;
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, h.rect.center());
        return true;
    }
    return false;
}

// Opens the settings panel with Ctrl+, and runs edit on it before pressing OK. False when the
// panel did not open.
inline bool editSettings(GuiApp& app, const std::function<void(SettingsDialog*)>& edit) {
    bool opened = false;
    auto c = QObject::connect(app.window.get(), &MainWindow::settingsDialogOpened, app.window.get(), [&](QWidget* w) {
        opened = true;
        QTimer::singleShot(0, w, [w, edit] {
            auto* dialog = qobject_cast<SettingsDialog*>(w);
            edit(dialog);
            dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
        });
    });
    app.window->activateWindow();  // offscreen, a closed dialog does not give the activation back
    if (!QTest::qWaitForWindowActive(app.window.get())) return false;
    app.input()->setFocus();
    QTest::keyClick(app.input(), Qt::Key_Comma, Qt::ControlModifier);
    QObject::disconnect(c);
    return opened;
}

inline void typeAndSend(GuiApp& app, const QString& text) {
    app.input()->setPlainText(text);
    QTest::keyClick(app.input(), Qt::Key_Return);
}

}  // namespace hearth::test
