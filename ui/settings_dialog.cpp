// Three tabs in the design's order: sampling, system prompt, engine. Every numeric field is a
// spin box bounded by chat_settings.h's ranges that shows its range; a value typed outside it
// stays in the field with a message saying why, and OK is refused until it is corrected.
#include "ui/settings_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include "app/chat/backend_choices.h"
#include "app/common/memory_fit.h"
#include "ui/appearance.h"

namespace hearth {

namespace {

// A context shorter than this cannot hold a system prompt, a question and an answer.
constexpr int kMinContextTokens = 256;

// A spin box that keeps what the user typed when it is outside the range (or below a sane
// minimum) instead of dropping the keystrokes; message() says why (empty: in range), and the
// value stays the last one in range until the text is corrected. Qt's own spin box refuses such
// keystrokes silently and reverts the text when the field loses focus.
template <class Spin>
class CheckedSpin : public Spin {
public:
    CheckedSpin(QString label, std::function<void()> changed)
        : label_(std::move(label)), changed_(std::move(changed)) {}
    // Values from 1 up to (not including) min are refused with reason (%1: the value, %2: min);
    // 0 stays allowed when it is the special value ("automatic", "the model's own").
    void setSaneMinimum(double min, QString reason) {
        saneMin_ = min;
        saneMinReason_ = std::move(reason);
    }
    QString message() const { return message_; }

protected:
    QValidator::State validate(QString& text, int& pos) const override {
        const QValidator::State base = Spin::validate(text, pos);
        QString t = text;
        if (!this->prefix().isEmpty() && t.startsWith(this->prefix())) t.remove(0, this->prefix().size());
        if (!this->suffix().isEmpty() && t.endsWith(this->suffix())) t.chop(this->suffix().size());
        bool number = false;
        const double v = this->locale().toDouble(t.trimmed(), &number);
        QString message;
        if (number && (v < double(this->minimum()) || v > double(this->maximum())))
            message = SettingsDialog::tr("%1 must be between %2 and %3; %4 is outside that range.")
                          .arg(label_, this->textFromValue(this->minimum()), this->textFromValue(this->maximum()),
                               t.trimmed());
        else if (number && v > 0 && v < saneMin_)
            message = saneMinReason_.arg(t.trimmed(), this->textFromValue(static_cast<int>(saneMin_)));
        if (message != message_) {
            message_ = message;
            changed_();
        }
        return message.isEmpty() ? base : QValidator::Intermediate;
    }
    // While the text is refused, leaving the field or pressing Enter keeps it (Qt would put the
    // previous value back without a word); the message says what to fix.
    void focusOutEvent(QFocusEvent* event) override {
        if (message_.isEmpty()) Spin::focusOutEvent(event);
        else QWidget::focusOutEvent(event);
    }
    void keyPressEvent(QKeyEvent* event) override {
        const bool enter = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
        if (enter && !message_.isEmpty()) return event->accept();
        Spin::keyPressEvent(event);
    }

private:
    QString label_;
    std::function<void()> changed_;
    double saneMin_ = 0;
    QString saneMinReason_;
    mutable QString message_;
};

// A field's bound as the field writes it.
QString numberText(const QSpinBox* spin, int v) { return spin->locale().toString(v); }
QString numberText(const QDoubleSpinBox* spin, double v) { return spin->locale().toString(v, 'f', spin->decimals()); }

// "min – max" and the field's unit; minText: the special value's text, shown instead of the minimum.
template <class Spin>
QString rangeText(const Spin* spin, const QString& minText = {}) {
    return QStringLiteral("%1 – %2%3")
        .arg(minText.isEmpty() ? numberText(spin, spin->minimum()) : minText, numberText(spin, spin->maximum()),
             spin->suffix());
}

QString paramLabel(const QString& key) {
    static const std::map<QString, const char*> labels = {
        {"temperature", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Temperature")},
        {"top_k", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Top-k")},
        {"top_p", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Top-p")},
        {"min_p", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Min-p")},
        {"typical_p", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Typical-p")},
        {"repeat_penalty", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Repetition penalty")},
        {"presence_penalty", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Presence penalty")},
        {"frequency_penalty", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Frequency penalty")},
        {"repeat_last_n", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Penalty window (tokens)")},
        {"seed", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Seed")},
        {"max_tokens", QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Max new tokens")},
    };
    const auto it = labels.find(key);
    return it == labels.end() ? key : QCoreApplication::translate("hearth::SettingsDialog", it->second);
}

QString specialText(const QString& key) {
    if (key == QLatin1String("seed")) return QCoreApplication::translate("hearth::SettingsDialog", "random");
    if (key == QLatin1String("repeat_last_n")) return QCoreApplication::translate("hearth::SettingsDialog", "all");
    if (key == QLatin1String("top_k")) return QCoreApplication::translate("hearth::SettingsDialog", "off");
    return {};
}

// Built-in preset names as the panel shows them (the stored name stays English).
QString presetLabel(const QString& name) {
    static const char* const names[] = {QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Precise"),
                                        QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Balanced"),
                                        QT_TRANSLATE_NOOP("hearth::SettingsDialog", "Creative")};
    for (const char* n : names)
        if (name == QLatin1String(n)) return QCoreApplication::translate("hearth::SettingsDialog", n);
    return name;
}

// A field with its range (or another hint) in muted text beside it.
QHBoxLayout* withHint(QWidget* field, const QString& hint) {
    auto* label = new QLabel(hint);
    label->setObjectName("hint_" + field->objectName());
    label->setEnabled(false);
    auto* row = new QHBoxLayout;
    row->addWidget(field, 1);
    row->addWidget(label);
    return row;
}

}  // namespace

SettingsDialog::SettingsDialog(SettingsController& app, const SettingsValues& current, const ChatSettings& defaults,
                               QWidget* parent)
    : QDialog(parent), app_(app), initial_(current), defaults_(defaults), tabs_(new QTabWidget) {
    setObjectName("settingsDialog");
    setWindowTitle(tr("Settings — Hearth"));
    tabs_->addTab(samplingPage(), tr("Sampling"));
    tabs_->addTab(promptPage(), tr("System prompt"));
    tabs_->addTab(enginePage(), tr("Engine and app"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    QPushButton* reset = buttons->addButton(tr("Reset to defaults"), QDialogButtonBox::ResetRole);
    QPushButton* saveDefaults = buttons->addButton(tr("Save as my defaults"), QDialogButtonBox::ActionRole);
    reset->setObjectName("resetButton");
    saveDefaults->setObjectName("saveDefaultsButton");
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(reset, &QPushButton::clicked, this, [this] {
        SettingsValues v = values();
        v.chat = defaults_;
        setValues(v);
        reset_ = true;
    });
    connect(saveDefaults, &QPushButton::clicked, this, [this] {
        app_.setChatDefaults(values().chat);
        defaults_ = values().chat;
    });
    rangeMessage_ = new QLabel;
    rangeMessage_->setObjectName("rangeMessage");
    rangeMessage_->setWordWrap(true);
    rangeMessage_->setStyleSheet(QStringLiteral("color: %1;").arg(errorTextColor(palette()).name()));
    rangeMessage_->hide();
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(tabs_);
    layout->addWidget(rangeMessage_);
    layout->addWidget(buttons);
    setValues(current);
    for (const auto& [key, spin] : params_)  // connected last: values() reads every field
        connect(spin, &QDoubleSpinBox::valueChanged, this, &SettingsDialog::showActivePreset);
    showActivePreset();
    resize(560, 620);
}

void SettingsDialog::updateRangeMessage() {
    QStringList messages;
    for (const auto& check : rangeChecks_)
        if (QString m = check(); !m.isEmpty()) messages << m;
    rangeMessage_->setText(messages.join(QLatin1Char('\n')));
    rangeMessage_->setVisible(!messages.isEmpty());
}

void SettingsDialog::accept() {
    updateRangeMessage();
    if (!rangeMessage_->isHidden()) return;
    QDialog::accept();
}

void SettingsDialog::addPage(QWidget* page, const QString& title) { tabs_->addTab(page, title); }

QWidget* SettingsDialog::samplingPage() {
    auto* page = new QWidget;
    auto* form = new QFormLayout(page);
    presets_ = new QComboBox;
    presets_->setObjectName("presetCombo");
    auto* savePreset = new QPushButton(tr("Save as preset…"));
    deletePreset_ = new QPushButton(tr("Delete"));
    deletePreset_->setObjectName("deletePresetButton");
    deletePreset_->setEnabled(false);  // until a saved preset is chosen
    deletePreset_->setToolTip(tr("Delete the chosen saved preset (built-in presets stay)"));
    auto* presetRow = new QHBoxLayout;
    presetRow->addWidget(presets_, 1);
    presetRow->addWidget(savePreset);
    presetRow->addWidget(deletePreset_);
    form->addRow(tr("Preset"), presetRow);
    refreshPresets();
    connect(presets_, &QComboBox::activated, this, [this](int i) {
        if (i > 0) applyPreset(presets_->itemData(i).toString());
    });
    connect(savePreset, &QPushButton::clicked, this, &SettingsDialog::savePreset);
    connect(deletePreset_, &QPushButton::clicked, this, &SettingsDialog::deletePreset);
    connect(presets_, &QComboBox::currentIndexChanged, this, [this](int i) {
        deletePreset_->setEnabled(i > 0 && !builtinPresetNames().contains(presets_->itemData(i).toString()));
    });
    for (const ParamRange& r : paramRanges()) {
        const QString key = QString::fromLatin1(r.key);
        auto* spin = new CheckedSpin<QDoubleSpinBox>(paramLabel(key), [this] { updateRangeMessage(); });
        rangeChecks_.push_back([spin] { return spin->message(); });
        spin->setObjectName("param_" + key);
        spin->setRange(r.min, r.max);
        spin->setDecimals(r.decimals);
        spin->setSingleStep(r.step);
        spin->setSpecialValueText(specialText(key));
        const double def = paramValue(defaults_, r.key);
        const QString defText = specialText(key).isEmpty() || def != r.min ? numberText(spin, def) : specialText(key);
        auto* hint = new QLabel(tr("%1 · default %2").arg(rangeText(spin, specialText(key)), defText));
        hint->setObjectName("hint_param_" + key);
        hint->setEnabled(false);
        auto* row = new QHBoxLayout;
        row->addWidget(spin, 1);
        row->addWidget(hint);
        form->addRow(paramLabel(key), row);
        params_[key] = spin;
        connect(spin, &QDoubleSpinBox::valueChanged, this, [this] { reset_ = false; });
    }
    stop_ = new QPlainTextEdit;
    stop_->setObjectName("stopStrings");
    stop_->setPlaceholderText(tr("One stop string per line"));
    stop_->setFixedHeight(stop_->fontMetrics().lineSpacing() * 3 + 12);
    form->addRow(tr("Stop strings"), stop_);
    thinking_ = new QCheckBox(tr("Reason before answering"));
    thinking_->setObjectName("thinkingCheck");
    form->addRow(tr("Thinking"), thinking_);
    samplingForm_ = form;
    form->setRowVisible(thinking_, false);  // until setThinkingMode() says the model reasons
    auto* note = new QLabel(tr("Sampling changes apply to the next reply of this conversation."));
    note->setWordWrap(true);
    form->addRow(note);
    return page;
}

QWidget* SettingsDialog::promptPage() {
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    systemPrompt_ = new QPlainTextEdit;
    systemPrompt_->setObjectName("systemPrompt");
    systemPrompt_->setPlaceholderText(tr("Empty: the model's own default system prompt, if it has one."));
    auto* note =
        new QLabel(tr("The system prompt always stays in what the model sees, even when old turns are left out."));
    note->setWordWrap(true);
    layout->addWidget(systemPrompt_, 1);
    layout->addWidget(note);
    return page;
}

QWidget* SettingsDialog::enginePage() {
    auto* page = new QWidget;
    auto* form = new QFormLayout(page);
    const auto checked = [this](const QString& label) {
        auto* spin = new CheckedSpin<QSpinBox>(label, [this] { updateRangeMessage(); });
        rangeChecks_.push_back([spin] { return spin->message(); });
        return spin;
    };
    auto* context = checked(tr("Context length"));
    context->setSaneMinimum(kMinContextTokens,
                            tr("A context of %1 tokens is too short for a conversation: use at "
                               "least %2, or 0 for the model's own."));
    threads_ = checked(tr("Threads")), context_ = context, diskBudget_ = checked(tr("KV disk budget"));
    context_->setObjectName("contextSpin");
    threads_->setObjectName("threadsSpin");
    kvType_ = new QComboBox, backend_ = new QComboBox, language_ = new QComboBox, appearance_ = new QComboBox;
    threads_->setRange(0, 256);
    threads_->setSpecialValueText(tr("automatic"));
    context_->setRange(0, 1 << 20);
    context_->setSingleStep(1024);
    context_->setSpecialValueText(tr("the model's own"));
    diskBudget_->setObjectName("diskBudgetSpin");
    diskBudget_->setRange(0, 1 << 20);
    diskBudget_->setSuffix(tr(" MB"));
    diskBudget_->setSingleStep(256);
    kvType_->addItem("F16", "f16");
    kvType_->addItem(tr("Q8_0 (half the memory)"), "q8_0");
    kvType_->setObjectName("kvTypeCombo");
    backend_->setObjectName("backendCombo");
    backend_->addItem(tr("Best available"), QString());
    QString reasons;
    for (const BackendChoice& b : backendChoices()) {
        backend_->addItem(b.available ? b.label : tr("%1 — unavailable").arg(b.label), b.name);
        if (!b.available) {
            backend_->setItemData(backend_->count() - 1, false, Qt::UserRole - 1);  // disables the item
            reasons += tr("%1 is unavailable: %2").arg(b.label, b.reason) + QLatin1Char('\n');
        }
    }
    auto* why = new QLabel(reasons.trimmed());
    why->setObjectName("backendReasons");
    why->setWordWrap(true);
    language_->addItem(tr("System language"), QString()), language_->addItem("English", "en"),
        language_->addItem("简体中文", "zh_CN");
    appearance_->addItem(tr("System"), QString()), appearance_->addItem(tr("Light"), "light"),
        appearance_->addItem(tr("Dark"), "dark");
    language_->setObjectName("languageCombo");
    appearance_->setObjectName("appearanceCombo");
    for (QSpinBox* spin : {threads_, context_, diskBudget_}) spin->setToolTip(tr("Range: %1").arg(rangeText(spin)));
    form->addRow(tr("Threads"), withHint(threads_, rangeText(threads_, tr("automatic"))));
    form->addRow(tr("Context length"), context_);
    auto* contextHint = new QLabel(tr("%1 tokens, or 0 for the model's own")
                                       .arg(QStringLiteral("%1 – %2").arg(numberText(context_, kMinContextTokens),
                                                                          numberText(context_, context_->maximum()))));
    contextHint->setObjectName("hint_contextSpin");
    contextHint->setEnabled(false);
    contextHint_ = contextHint;
    form->addRow(QString(), contextHint);
    kvMemory_ = new QLabel;
    kvMemory_->setObjectName("kvMemory");
    kvMemory_->setWordWrap(true);
    form->addRow(QString(), kvMemory_);
    form->setRowVisible(kvMemory_, false);  // until setModel()
    form->addRow(tr("KV cache type"), kvType_);
    form->addRow(tr("Backend"), backend_);
    form->addRow(QString(), why);
    form->addRow(tr("KV disk budget"), withHint(diskBudget_, rangeText(diskBudget_)));
    form->addRow(specGroup());
    form->addRow(tr("Language"), language_);
    form->addRow(tr("Appearance"), appearance_);
    reloadNote_ = new QLabel;
    reloadNote_->setObjectName("reloadNote");
    reloadNote_->setWordWrap(true);
    form->addRow(reloadNote_);
    for (QSpinBox* s : {threads_, context_})
        connect(s, &QSpinBox::valueChanged, this, &SettingsDialog::updateReloadNote);
    for (QComboBox* c : {kvType_, backend_})
        connect(c, &QComboBox::currentIndexChanged, this, &SettingsDialog::updateReloadNote);
    connect(language_, &QComboBox::currentIndexChanged, this, &SettingsDialog::updateReloadNote);
    connect(context_, &QSpinBox::valueChanged, this, &SettingsDialog::updateKvMemory);
    connect(kvType_, &QComboBox::currentIndexChanged, this, &SettingsDialog::updateKvMemory);
    return page;
}

void SettingsDialog::setModel(const ModelFileInfo& info) {
    trainedContext_ = info.contextLength;
    kvLayout_ = info.kvLayout;
    if (trainedContext_ > 0) {
        context_->setMaximum(trainedContext_);
        context_->setToolTip(tr("Range: %1").arg(rangeText(context_)));
        contextHint_->setText(tr("%1 tokens (the model was trained for %2), or 0 for the model's own")
                                  .arg(QStringLiteral("%1 – %2").arg(numberText(context_, kMinContextTokens),
                                                                     numberText(context_, trainedContext_)),
                                       numberText(context_, trainedContext_)));
    }
    updateKvMemory();
}

void SettingsDialog::updateKvMemory() {
    if (!kvMemory_ || kvLayout_.nLayers <= 0 || trainedContext_ <= 0) return;
    const int n = context_->value() > 0 ? std::min(context_->value(), trainedContext_) : trainedContext_;
    KvLayout layout = kvLayout_;
    layout.elementType =
        parseKvElementType(kvType_->currentData().toString().toStdString()).value_or(KvElementType::F16);
    const qint64 bytes = kvCacheBytes(layout, n);
    if (bytes < 0) return kvMemory_->setText(tr("KV cache: this type cannot hold this model's rows"));
    QString text = tr("KV cache at %1 tokens: %2").arg(numberText(context_, n), formatBytes(bytes));
    if (hasWindowGroup(layout)) {
        KvLayout all = layout;
        all.window = 0, all.windowLayers.clear();
        text += QLatin1Char(' ') +
            tr("(its sliding-window layers keep only their last %1 positions; every layer keeping every position "
               "would take %2)")
                .arg(numberText(context_, layout.window), formatBytes(kvCacheBytes(all, n)));
    }
    kvMemory_->setText(text);
    if (auto* form = qobject_cast<QFormLayout*>(kvMemory_->parentWidget()->layout()))
        form->setRowVisible(kvMemory_, true);
}

// Ranges as SpecOptions allows them; the draft model's row only for the draft-model drafter.
QWidget* SettingsDialog::specGroup() {
    spec_ = new QGroupBox(tr("Speculative decoding"));
    spec_->setObjectName("specGroup");
    spec_->setCheckable(true);
    auto* maxDraft = new CheckedSpin<QSpinBox>(tr("Longest draft"), [this] { updateRangeMessage(); });
    rangeChecks_.push_back([maxDraft] { return maxDraft->message(); });
    drafter_ = new QComboBox, draftModel_ = new QLineEdit, maxDraft_ = maxDraft;
    drafter_->setObjectName("specDrafter");
    draftModel_->setObjectName("specDraftModel");
    maxDraft_->setObjectName("specMaxDraft");
    drafter_->addItem(tr("Default (this chat and your earlier chats)"), "default");
    drafter_->addItem(tr("N-gram lookup (no extra model)"), "ngram");
    drafter_->addItem(tr("Draft model"), "draft");
    drafter_->addItem(tr("Your earlier conversations (history)"), "history");
    draftModel_->setPlaceholderText(tr("A small GGUF model with the same vocabulary"));
    maxDraft_->setRange(SpecSettings::kMinDraft, SpecSettings::kMaxDraft);
    maxDraft_->setSuffix(tr(" tokens"));
    maxDraft_->setToolTip(tr("Range: %1").arg(rangeText(maxDraft_)));
    auto* choose = new QPushButton(tr("Choose…"));
    auto* modelRow = new QHBoxLayout;
    modelRow->addWidget(draftModel_, 1);
    modelRow->addWidget(choose);
    auto* form = new QFormLayout(spec_);
    form->addRow(tr("Drafter"), drafter_);
    form->addRow(tr("Draft model"), modelRow);
    form->addRow(tr("Longest draft"), withHint(maxDraft_, rangeText(maxDraft_)));
    auto* note = new QLabel(tr("The same replies as without it when sampling is greedy; applies to the next reply."));
    note->setWordWrap(true);
    note->setEnabled(false);
    form->addRow(note);
    const auto showModelRow = [this, choose] {
        const bool draft = drafter_->currentData().toString() == QLatin1String("draft");
        draftModel_->setEnabled(draft);
        choose->setEnabled(draft);
    };
    connect(drafter_, &QComboBox::currentIndexChanged, this, showModelRow);
    connect(choose, &QPushButton::clicked, this, &SettingsDialog::chooseDraftModel);
    showModelRow();
    return spec_;
}

void SettingsDialog::chooseDraftModel() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Choose a draft model"), draftModel_->text(),
                                                      tr("GGUF models (*.gguf);;All files (*)"));
    if (!path.isEmpty()) draftModel_->setText(path);
}

void SettingsDialog::updateReloadNote() {
    QStringList notes;
    if (engineChanged())
        notes << tr("Threads, context length, KV type and backend apply when the model reloads (on OK).");
    if (language_->currentData().toString() != initial_.language)
        notes << tr("The language changes when Hearth restarts.");
    reloadNote_->setText(notes.join(QLatin1Char('\n')));
}

void SettingsDialog::setThinkingMode(ThinkingMode mode) {
    thinkingMode_ = mode;
    samplingForm_->setRowVisible(thinking_, mode != ThinkingMode::None);
    thinking_->setEnabled(mode == ThinkingMode::Switchable);
    if (mode == ThinkingMode::Always) thinking_->setChecked(true);
    thinking_->setToolTip(
        mode == ThinkingMode::Always
            ? tr("This model always reasons before it answers: its chat template has no switch.")
            : tr("Off: the model answers at once, without reasoning first (faster, often less careful)."));
}

void SettingsDialog::refreshPresets() {
    presets_->clear();
    presets_->addItem(tr("Choose a preset…"), QString());
    for (const QString& name : builtinPresetNames()) presets_->addItem(presetLabel(name), name);
    for (const QString& name : app_.userPresetNames()) presets_->addItem(name, name);
}

void SettingsDialog::applyPreset(const QString& name) {
    SettingsValues v = values();
    if (builtinPresetNames().contains(name)) v.chat = applyBuiltinPreset(name, v.chat);
    else if (auto p = app_.userPreset(name, v.chat)) v.chat = *p;
    setValues(v);
    showActivePreset();
}

// A preset is active when applying it would change nothing; built-in ones are tried first.
void SettingsDialog::showActivePreset() {
    const ChatSettings now = values().chat;
    int active = 0;
    for (int i = 1; i < presets_->count() && active == 0; ++i) {
        const QString name = presets_->itemData(i).toString();
        if (builtinPresetNames().contains(name)) {
            if (applyBuiltinPreset(name, now) == now) active = i;
        } else if (auto p = app_.userPreset(name, now); p && *p == now) {
            active = i;
        }
    }
    presets_->setCurrentIndex(active);
}

void SettingsDialog::deletePreset() {
    const QString name = presets_->currentData().toString();
    if (name.isEmpty() || builtinPresetNames().contains(name)) return;
    app_.removeUserPreset(name);
    refreshPresets();
    showActivePreset();
}

void SettingsDialog::savePreset() {
    bool accepted = false;
    const QString name =
        QInputDialog::getText(this, tr("Save preset"), tr("Name:"), QLineEdit::Normal, {}, &accepted).trimmed();
    if (!accepted || name.isEmpty() || builtinPresetNames().contains(name)) return;
    app_.saveUserPreset(name, values().chat);
    refreshPresets();
    showActivePreset();
}

SettingsValues SettingsDialog::values() const {
    SettingsValues v = initial_;
    for (const auto& [key, spin] : params_) setParamValue(v.chat, key.toLatin1().constData(), spin->value());
    v.chat.stop = stop_->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    v.chat.systemPrompt = systemPrompt_->toPlainText().trimmed();
    if (thinkingMode_ == ThinkingMode::Switchable) v.chat.thinking = thinking_->isChecked();
    v.engine.threads = threads_->value();
    v.engine.contextLength = context_->value();
    v.engine.kvType = kvType_->currentData().toString();
    v.engine.backend = backend_->currentData().toString();
    v.engine.kvDiskBudgetMb = diskBudget_->value();
    v.engine.spec.enabled = spec_->isChecked();
    v.engine.spec.drafter = drafter_->currentData().toString();
    v.engine.spec.draftModelPath = draftModel_->text().trimmed();
    v.engine.spec.maxDraft = maxDraft_->value();
    v.language = language_->currentData().toString();
    v.appearance = appearance_->currentData().toString();
    return v;
}

void SettingsDialog::setValues(const SettingsValues& v) {
    for (const auto& [key, spin] : params_) spin->setValue(paramValue(v.chat, key.toLatin1().constData()));
    stop_->setPlainText(v.chat.stop.join(QLatin1Char('\n')));
    systemPrompt_->setPlainText(v.chat.systemPrompt);
    thinking_->setChecked(thinkingMode_ == ThinkingMode::Always || v.chat.thinking);
    threads_->setValue(v.engine.threads);
    context_->setValue(v.engine.contextLength);
    kvType_->setCurrentIndex(std::max(0, kvType_->findData(v.engine.kvType)));
    backend_->setCurrentIndex(std::max(0, backend_->findData(v.engine.backend)));
    diskBudget_->setValue(v.engine.kvDiskBudgetMb);
    spec_->setChecked(v.engine.spec.enabled);
    drafter_->setCurrentIndex(std::max(0, drafter_->findData(v.engine.spec.drafter)));
    draftModel_->setText(v.engine.spec.draftModelPath);
    maxDraft_->setValue(v.engine.spec.maxDraft);
    language_->setCurrentIndex(std::max(0, language_->findData(v.language)));
    appearance_->setCurrentIndex(std::max(0, appearance_->findData(v.appearance)));
    updateReloadNote();
}

}  // namespace hearth
