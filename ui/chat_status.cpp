// Numbers are formatted with the locale's grouping ("1,204 / 8,192").
#include "ui/chat_status.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>

namespace hearth {

ChatStatus::ChatStatus(QWidget* parent)
    : QWidget(parent),
      model_(new QLabel),
      speed_(new QLabel),
      context_(new QLabel),
      meter_(new QProgressBar),
      kv_(new QLabel),
      spec_(new QLabel) {
    model_->setObjectName("statusModel");
    speed_->setObjectName("statusSpeed");
    context_->setObjectName("statusContext");
    meter_->setObjectName("contextMeter");
    kv_->setObjectName("statusKv");
    spec_->setObjectName("statusSpec");
    meter_->setTextVisible(false);
    meter_->setFixedWidth(120);
    meter_->setFixedHeight(10);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 2, 8, 2);
    layout->addWidget(model_);
    layout->addSpacing(12);
    layout->addWidget(speed_);
    layout->addSpacing(12);
    layout->addWidget(spec_);
    layout->addStretch(1);
    layout->addWidget(context_);
    layout->addWidget(meter_);
    layout->addSpacing(12);
    layout->addWidget(kv_);
    setContext(0, 0);
}

void ChatStatus::setModel(const LoadedModel& m) {
    if (m.backendNote.isEmpty()) model_->setText(tr("%1 · %2").arg(m.file.name, m.backend));
    else  // said once, here: e.g. the CPU lacks AVX2 and the slow reference kernels run
        model_->setText(tr("%1 · %2 (%3)").arg(m.file.name, m.backend, m.backendNote));
    model_->setToolTip(m.file.path);
    speed_->clear();
    kv_->clear();
    spec_->clear();
    setContext(0, m.contextLength);
}

void ChatStatus::setMessage(const QString& text) { model_->setText(text); }

void ChatStatus::replyStarted(const ReplyStarted& info) { setContext(info.promptTokens, info.contextLength); }

void ChatStatus::replyFinished(const ReplyStats& s) {
    speed_->setText(tr("%1 tok/s · first token %2 ms").arg(s.tokensPerSecond, 0, 'f', 1).arg(s.ttftMs, 0, 'f', 0));
    setContext(s.promptTokens + s.generatedTokens, s.contextLength);
    spec_->setText(s.specDrafted >= 0 ? tr("spec: accepted %1 of %2 drafted")
                                            .arg(QLocale().toString(s.specAccepted), QLocale().toString(s.specDrafted))
                                      : QString());
    kv_->setToolTip(s.kvNote);
    if (s.kvRestoredTokens > 0) {
        showRestored(s.kvRestoredTokens, s.kvSavedSeconds);
        return;
    }
    if (s.reusedTokens > 0) {
        kv_->setText(tr("KV reused: %1 of %2 prompt tokens")
                         .arg(QLocale().toString(s.reusedTokens), QLocale().toString(s.promptTokens)));
        return;
    }
    // Why nothing came from the store, when something was refused or failed.
    kv_->setText(s.kvNote.isEmpty() ? tr("KV: computed in full")
                                    : tr("KV: computed in full (%1)").arg(s.kvNote.left(80)));
}

void ChatStatus::showRestored(int kvRestoredTokens, double savedSeconds) {
    const QString n = QLocale().toString(kvRestoredTokens);
    kv_->setText(savedSeconds >= 0
                     ? tr("KV restored: %1 tokens (saved ~%2 s)").arg(n, QLocale().toString(savedSeconds, 'f', 1))
                     : tr("KV restored: %1 tokens").arg(n));
}

void ChatStatus::setContext(int used, int total) {
    context_->setText(tr("context %1 / %2").arg(QLocale().toString(used), QLocale().toString(total)));
    meter_->setRange(0, std::max(1, total));
    meter_->setValue(std::min(used, std::max(1, total)));
}

}  // namespace hearth
