// hearth (GUI) entry point: the composition root, and the one file of app/ allowed to include
// ui/. Builds the settings, the store, the engine host, the controllers and the window, and
// tears them down in reverse order (the engine thread is joined before the store closes).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>

#include "app/chat/app_settings.h"
#include "app/chat/conversation_controller.h"
#include "app/chat/engine_switch.h"
#include "app/chat/local_server_controller.h"
#include "app/chat/remote_controller.h"
#include "app/chat/reply_controller.h"
#include "app/chat/settings_controller.h"
#include "app/chat/model_controller.h"
#include "app/engine_host/engine_host.h"
#include "app/common/error_text.h"
#include "app/common/paths.h"
#include "ui/appearance.h"
#include "ui/interface_language.h"
#include "ui/main_window.h"

namespace {

std::unique_ptr<hearth::ConversationStore> openStore(const QString& path, int budgetMb) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    const int64_t budget = int64_t{budgetMb} << 20;
    auto store = hearth::ConversationStore::open(path.toStdString(), budget);
    if (store) return std::move(*store);
    const auto choice = QMessageBox::critical(
        nullptr, QObject::tr("Hearth"),
        QObject::tr("The conversation database cannot be opened:\n%1\n\nMove it aside and start with an empty one? "
                    "(The old file is kept, renamed.)")
            .arg(hearth::describe(store.error())),
        QMessageBox::Yes | QMessageBox::Cancel);
    if (choice != QMessageBox::Yes || !hearth::ConversationStore::moveAside(path.toStdString())) return nullptr;
    store = hearth::ConversationStore::open(path.toStdString(), budget);
    return store ? std::move(*store) : nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("Hearth");
    QApplication::setApplicationVersion(HEARTH_VERSION);
    QApplication::setDesktopFileName("hearth");
    hearth::AppSettings settings;
    const hearth::InterfaceLanguage language(settings.language());  // the settings' override, else the system's
    QCommandLineParser parser;
    parser.setApplicationDescription(QObject::tr("Local LLM chat with its own inference engine."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption({"model", QObject::tr("GGUF model to load."), "path"});
    parser.addOption({"db", QObject::tr("Conversation database."), "path", hearth::defaultDatabasePath()});
    parser.process(app);
    hearth::applyAppearance(app, settings.raw().value("ui/appearance").toString());

    auto store = openStore(parser.value("db"), settings.engine().kvDiskBudgetMb);
    if (!store) return 1;
    hearth::EngineHost host;
    hearth::ModelController models(host, settings);
    hearth::ConversationController conversations(*store, host);
    hearth::SettingsController chatSettings(conversations, models, settings);
    hearth::ApiKeyStore keys;
    hearth::RemoteController remote(settings, keys);
    hearth::EngineSwitch engines(host, remote);  // replies on this machine or a remote server
    hearth::ReplyController replies(conversations, chatSettings, models, engines);
    hearth::LocalServerController localServer(host, models, settings);  // stopped on quit, before the host goes
    hearth::MainWindow window({.conversations = conversations,
                               .replies = replies,
                               .settings = chatSettings,
                               .models = models,
                               .remote = &remote,
                               .localServer = &localServer});
    window.show();
    if (conversations.list()->rowCount() > 0) conversations.openConversation(conversations.list()->idAt(0));
    QString model = parser.value("model");
    if (model.isEmpty()) model = settings.lastModel();
    if (model.isEmpty() || !QFileInfo::exists(model)) model = hearth::defaultModelPath();
    // No model at all: the window's first-start page explains and offers the picker.
    if (QFileInfo::exists(model)) window.loadModel(model);
    return QApplication::exec();
}
