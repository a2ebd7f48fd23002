// The settings panel: sampling parameters (each with its range and the model's default; a
// value typed outside the range is kept with a message and OK is refused until it is fixed),
// presets (built-in and saved; the box shows the one the values equal, saved ones can be
// deleted), stop strings, thinking (for a model that reasons before it answers); the system
// prompt; engine settings (threads, context length, KV type, backend with the reason one is
// unavailable, KV disk budget, speculative decoding) and the language and appearance. OK
// applies: sampling to the open conversation's next reply, speculation to the next reply, the
// disk budget at once, the other engine changes by reloading the model (the panel says which
// changes need it).
#pragma once

#include <QDialog>
#include <functional>
#include <map>
#include <vector>

#include "app/chat/settings_controller.h"
#include "app/common/model_info.h"
#include "engine/tokenizer/chat_format.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace hearth {

struct SettingsValues {
    ChatSettings chat;
    EngineSettings engine;
    QString language;  // "", "en", "zh_CN"
    QString appearance;  // "", "light", "dark"
};

class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    // current: the open conversation's settings; defaults: the model's + the user's saved ones.
    SettingsDialog(SettingsController& app, const SettingsValues& current, const ChatSettings& defaults,
                   QWidget* parent = nullptr);

    SettingsValues values() const;
    bool resetRequested() const { return reset_; }  // "Reset to defaults" and nothing changed after
    bool engineChanged() const { return needsReload(initial_.engine, values().engine); }  // a reload is needed
    void setValues(const SettingsValues& v);
    void applyPreset(const QString& name);  // a built-in or saved preset's name
    // The loaded model's: None hides the Thinking row (the default), Switchable offers it,
    // Always shows it on and disabled (the model's template has no switch).
    void setThinkingMode(ThinkingMode mode);
    // The loaded model's facts: the context length allowed up to its trained context, and the
    // KV memory the chosen context and KV type take (with sliding-window layers, what their
    // own pool saves), shown before the model reloads.
    void setModel(const ModelFileInfo& info);
    // Refused (the dialog stays, with the message) while a field holds a value outside its range.
    void accept() override;
    // A tab of another part's settings (the window's servers page), after the built-in ones.
    void addPage(QWidget* page, const QString& title);

private:
    QWidget* samplingPage();
    QWidget* promptPage();
    QWidget* enginePage();
    QWidget* specGroup();
    void chooseDraftModel();
    void refreshPresets();
    void savePreset();
    void deletePreset();
    void showActivePreset();  // selects the preset the values equal, else "Choose a preset…"
    void updateRangeMessage();
    void updateReloadNote();
    void updateKvMemory();

    SettingsController& app_;
    SettingsValues initial_;
    ChatSettings defaults_;
    bool reset_ = false;
    std::map<QString, QDoubleSpinBox*> params_;
    QComboBox* presets_;
    QPushButton* deletePreset_ = nullptr;
    QLabel* rangeMessage_ = nullptr;
    std::vector<std::function<QString()>> rangeChecks_;  // each field's message; empty: in range
    QPlainTextEdit* stop_;
    QCheckBox* thinking_;
    ThinkingMode thinkingMode_ = ThinkingMode::None;
    QFormLayout* samplingForm_ = nullptr;
    QPlainTextEdit* systemPrompt_;
    QSpinBox *threads_, *context_, *diskBudget_;
    QComboBox *kvType_, *backend_, *language_, *appearance_;
    QGroupBox* spec_;
    QComboBox* drafter_;
    QLineEdit* draftModel_;
    QSpinBox* maxDraft_;
    QLabel* reloadNote_;
    QLabel* contextHint_ = nullptr;
    QLabel* kvMemory_ = nullptr;  // hidden until setModel()
    int trainedContext_ = 0;
    KvLayout kvLayout_;  // the model's (nLayers 0: none known)
    QTabWidget* tabs_;
};

}  // namespace hearth
