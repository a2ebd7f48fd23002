// Per-conversation settings live in the conversation store (what differs from the defaults, as
// JSON, and the system prompt); everything else in AppSettings.
#include "app/chat/settings_controller.h"

#include <QJsonDocument>

#include "app/chat/conversation_controller.h"
#include "app/chat/model_controller.h"

namespace hearth {

SettingsController::SettingsController(ConversationController& conversations, ModelController& models,
                                       AppSettings& settings, QObject* parent)
    : QObject(parent), conversations_(conversations), models_(models), settings_(settings) {}

ChatSettings SettingsController::defaultSettings() const {
    return settings_.chatDefaults(models_.model() ? models_.model()->file.defaults : ChatSettings{});
}

ChatSettings SettingsController::conversationSettings() const {
    ChatSettings s = defaultSettings();
    const qint64 current = conversations_.current();
    auto conv = current ? conversations_.store().conversation(current) : Result<std::optional<Conversation>>{};
    if (!conv || !*conv) return s;
    s = fromJson(QJsonDocument::fromJson(QByteArray::fromStdString((*conv)->settingsJson)).object(), s);
    if (!(*conv)->systemPrompt.empty()) s.systemPrompt = QString::fromStdString((*conv)->systemPrompt);
    return s;
}

bool SettingsController::hasOverrides() const { return !(conversationSettings() == defaultSettings()); }

void SettingsController::setConversationSettings(const ChatSettings& s) {
    if (conversations_.current() == 0) conversations_.newConversation();
    const qint64 current = conversations_.current();
    const ChatSettings base = defaultSettings();
    QJsonObject o = s == base ? QJsonObject{} : toJson(s);
    o.remove("system_prompt");
    ConversationStore& store = conversations_.store();
    conversations_.ok(store.setSettings(current, QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString()));
    conversations_.ok(
        store.setSystemPrompt(current, s.systemPrompt == base.systemPrompt ? "" : s.systemPrompt.toStdString()));
}

void SettingsController::resetConversationSettings() {
    const qint64 current = conversations_.current();
    if (current == 0) return;
    conversations_.ok(conversations_.store().setSettings(current, "{}"));
    conversations_.ok(conversations_.store().setSystemPrompt(current, ""));
}

void SettingsController::setChatDefaults(const ChatSettings& s) { settings_.setChatDefaults(s); }

QStringList SettingsController::userPresetNames() const { return settings_.userPresetNames(); }

std::optional<ChatSettings> SettingsController::userPreset(const QString& name, const ChatSettings& base) const {
    return settings_.userPreset(name, base);
}

void SettingsController::saveUserPreset(const QString& name, const ChatSettings& s) {
    settings_.saveUserPreset(name, s);
}

void SettingsController::removeUserPreset(const QString& name) { settings_.removeUserPreset(name); }

EngineSettings SettingsController::engine() const { return settings_.engine(); }

void SettingsController::setEngine(const EngineSettings& e) {
    const EngineSettings before = settings_.engine();
    if (e == before) return;
    settings_.setEngine(e);
    if (e.kvDiskBudgetMb != before.kvDiskBudgetMb) conversations_.setKvDiskBudget(qint64{e.kvDiskBudgetMb} << 20);
    models_.reloadIfNeeded(before);
}

QString SettingsController::language() const { return settings_.language(); }
void SettingsController::setLanguage(const QString& code) { settings_.setLanguage(code); }
QString SettingsController::appearance() const { return settings_.raw().value("ui/appearance").toString(); }
void SettingsController::setAppearance(const QString& name) { settings_.raw().setValue("ui/appearance", name); }

}  // namespace hearth
