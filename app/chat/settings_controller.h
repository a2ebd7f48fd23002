// The settings a reply uses and the settings panel edits, without widgets: the defaults (the
// loaded model's recommended values with the user's saved ones on top), the open conversation's
// overrides and system prompt, presets, and the application's engine, language and appearance
// settings. GUI thread only.
#pragma once

#include <QObject>
#include <optional>

#include "app/chat/app_settings.h"
#include "app/chat/chat_settings.h"

namespace hearth {

class ConversationController;
class ModelController;

class SettingsController : public QObject {
    Q_OBJECT
public:
    SettingsController(ConversationController& conversations, ModelController& models, AppSettings& settings,
                       QObject* parent = nullptr);

    // The defaults (model's + the user's saved ones) and the open conversation's settings.
    ChatSettings defaultSettings() const;
    ChatSettings conversationSettings() const;
    bool hasOverrides() const;
    // Stores what differs from the defaults with the open conversation (a new one when none is open).
    void setConversationSettings(const ChatSettings& s);
    void resetConversationSettings();
    void setChatDefaults(const ChatSettings& s);  // the user's defaults, for every conversation

    QStringList userPresetNames() const;
    std::optional<ChatSettings> userPreset(const QString& name, const ChatSettings& base) const;
    void saveUserPreset(const QString& name, const ChatSettings& s);
    void removeUserPreset(const QString& name);

    EngineSettings engine() const;
    // Saves e. A new KV disk budget applies at once; the model is loaded again when e needs it
    // (context length, threads, KV type, backend); speculation is read for each reply.
    void setEngine(const EngineSettings& e);
    QString language() const;  // "" (the system's), "en", "zh_CN"
    void setLanguage(const QString& code);
    QString appearance() const;  // ui/appearance.h's names
    void setAppearance(const QString& name);

private:
    ConversationController& conversations_;
    ModelController& models_;
    AppSettings& settings_;
};

}  // namespace hearth
