// The application's own settings in QSettings: default chat settings (on top of the model's
// recommended values), user-saved presets, engine settings, the language, the last model.
// Per-conversation overrides live in the conversation store, not here.
#pragma once

#include <QSettings>
#include <QString>
#include <QStringList>
#include <memory>
#include <optional>

#include "app/chat/chat_settings.h"
#include "engine/spec/spec_options.h"

namespace hearth {

// Speculative decoding for every reply (engine/spec): a drafter proposes tokens that the model
// verifies in one step; exact for greedy decoding, the same distribution when sampling.
struct SpecSettings {
    static constexpr int kMinDraft = 1, kMaxDraft = 32;  // SpecOptions::maxDraft's range
    bool enabled = false;
    // "default" (n-gram and history continuations as trees, SpecDrafter::Auto), "ngram" (lookup
    // in the conversation), "draft" (a small model) or "history" (earlier conversations)
    QString drafter = "default";
    QString draftModelPath;  // "draft": a GGUF with the model's vocabulary
    int maxDraft = 8;  // most tokens drafted per step, kMinDraft..kMaxDraft
    bool operator==(const SpecSettings&) const = default;
};
// What each request carries: drafter Off when disabled, maxDraft clamped into its range;
// "default" is specAuto() (trees, the policy on).
SpecOptions toSpecOptions(const SpecSettings& s);

struct EngineSettings {
    int threads = 0;  // 0: one per physical core
    int contextLength = 0;  // 0: the model's own
    QString kvType = "f16";  // "f16" or "q8_0"
    QString backend;  // a BackendInfo name; empty: the best available
    int kvDiskBudgetMb = 2048;  // the store's budget for saved KV blocks
    SpecSettings spec;
    bool operator==(const EngineSettings&) const = default;
};
// Whether going from a to b needs the model loaded again (threads, context, KV type, backend);
// the disk budget and speculation apply at once.
bool needsReload(const EngineSettings& a, const EngineSettings& b);

class AppSettings {
public:
    // organization/application name the QSettings file (tests pass a scratch file instead).
    AppSettings();
    explicit AppSettings(const QString& iniFile);

    // The model's defaults with the user's saved changes on top.
    ChatSettings chatDefaults(const ChatSettings& modelDefaults) const;
    void setChatDefaults(const ChatSettings& s);
    void clearChatDefaults();

    QStringList userPresetNames() const;
    std::optional<ChatSettings> userPreset(const QString& name, const ChatSettings& base) const;
    void saveUserPreset(const QString& name, const ChatSettings& s);
    void removeUserPreset(const QString& name);

    EngineSettings engine() const;
    void setEngine(const EngineSettings& e);

    QString language() const;  // "" (the system's), "en", "zh_CN"
    void setLanguage(const QString& code);
    QString lastModel() const;
    void setLastModel(const QString& path);

    QSettings& raw() { return *settings_; }

private:
    std::unique_ptr<QSettings> settings_;
};

}  // namespace hearth
