// QSettings keys: chat/defaults and presets/<name> hold chat_settings.h JSON; engine/*,
// engine/spec/*.
#include "app/chat/app_settings.h"

#include <QJsonDocument>
#include <algorithm>

namespace hearth {

namespace {

QJsonObject parseObject(const QString& text) { return QJsonDocument::fromJson(text.toUtf8()).object(); }
QString writeObject(const QJsonObject& o) { return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)); }

}  // namespace

SpecOptions toSpecOptions(const SpecSettings& s) {
    SpecOptions o;
    if (!s.enabled) return o;
    const int32_t maxDraft = std::clamp(s.maxDraft, SpecSettings::kMinDraft, SpecSettings::kMaxDraft);
    if (s.drafter == QLatin1String("default")) return specAuto(maxDraft);
    o.drafter = s.drafter == QLatin1String("draft") ? SpecDrafter::DraftModel
        : s.drafter == QLatin1String("history")     ? SpecDrafter::History
                                                    : SpecDrafter::NGram;
    o.draftModelPath = s.draftModelPath.toStdString();
    o.maxDraft = maxDraft;
    return o;
}

bool needsReload(const EngineSettings& a, const EngineSettings& b) {
    return a.threads != b.threads || a.contextLength != b.contextLength || a.kvType != b.kvType ||
        a.backend != b.backend;
}

AppSettings::AppSettings()
    : settings_(std::make_unique<QSettings>(QStringLiteral("Hearth"), QStringLiteral("Hearth"))) {}
AppSettings::AppSettings(const QString& iniFile)
    : settings_(std::make_unique<QSettings>(iniFile, QSettings::IniFormat)) {}

ChatSettings AppSettings::chatDefaults(const ChatSettings& modelDefaults) const {
    return fromJson(parseObject(settings_->value("chat/defaults").toString()), modelDefaults);
}
void AppSettings::setChatDefaults(const ChatSettings& s) {
    settings_->setValue("chat/defaults", writeObject(toJson(s)));
}
void AppSettings::clearChatDefaults() { settings_->remove("chat/defaults"); }

QStringList AppSettings::userPresetNames() const {
    settings_->beginGroup("presets");
    QStringList names = settings_->childKeys();
    settings_->endGroup();
    return names;
}

std::optional<ChatSettings> AppSettings::userPreset(const QString& name, const ChatSettings& base) const {
    const QVariant v = settings_->value("presets/" + name);
    if (!v.isValid()) return std::nullopt;
    ChatSettings s = fromJson(parseObject(v.toString()), base);
    s.systemPrompt = base.systemPrompt;  // a preset is about sampling, not the conversation's prompt
    return s;
}

void AppSettings::saveUserPreset(const QString& name, const ChatSettings& s) {
    QJsonObject o = toJson(s);
    o.remove("system_prompt");
    settings_->setValue("presets/" + name, writeObject(o));
}
void AppSettings::removeUserPreset(const QString& name) { settings_->remove("presets/" + name); }

EngineSettings AppSettings::engine() const {
    EngineSettings e;
    e.threads = settings_->value("engine/threads", 0).toInt();
    e.contextLength = settings_->value("engine/contextLength", 0).toInt();
    e.kvType = settings_->value("engine/kvType", "f16").toString();
    e.backend = settings_->value("engine/backend").toString();
    e.kvDiskBudgetMb = settings_->value("engine/kvDiskBudgetMb", 2048).toInt();
    e.spec.enabled = settings_->value("engine/spec/enabled", false).toBool();
    const QString drafter = settings_->value("engine/spec/drafter", "default").toString();
    e.spec.drafter = QStringList{"ngram", "draft", "history"}.contains(drafter) ? drafter : "default";
    e.spec.draftModelPath = settings_->value("engine/spec/draftModel").toString();
    e.spec.maxDraft = std::clamp(settings_->value("engine/spec/maxDraft", 8).toInt(), SpecSettings::kMinDraft,
                                 SpecSettings::kMaxDraft);
    return e;
}

void AppSettings::setEngine(const EngineSettings& e) {
    settings_->setValue("engine/threads", e.threads);
    settings_->setValue("engine/contextLength", e.contextLength);
    settings_->setValue("engine/kvType", e.kvType);
    settings_->setValue("engine/backend", e.backend);
    settings_->setValue("engine/kvDiskBudgetMb", e.kvDiskBudgetMb);
    settings_->setValue("engine/spec/enabled", e.spec.enabled);
    settings_->setValue("engine/spec/drafter", e.spec.drafter);
    settings_->setValue("engine/spec/draftModel", e.spec.draftModelPath);
    settings_->setValue("engine/spec/maxDraft", e.spec.maxDraft);
}

QString AppSettings::language() const { return settings_->value("ui/language").toString(); }
void AppSettings::setLanguage(const QString& code) { settings_->setValue("ui/language", code); }
QString AppSettings::lastModel() const { return settings_->value("model/last").toString(); }
void AppSettings::setLastModel(const QString& path) { settings_->setValue("model/last", path); }

}  // namespace hearth
