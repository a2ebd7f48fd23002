// Numbers are formatted with the locale's grouping ("1,204 / 8,192"). The model name's label
// ignores its size hint, so it gets only the room the other fields leave: it is elided first.
#include "ui/chat_status.h"

#include <QHBoxLayout>
#include <QLocale>
#include <QPainter>
#include <QStyle>
#include <QProgressBar>
#include <QToolButton>

#include "app/common/error_text.h"
#include "ui/details_dialog.h"

namespace hearth {

ElidingLabel::ElidingLabel(QWidget* parent) : QLabel(parent) { setTextFormat(Qt::PlainText); }

void ElidingLabel::setFullText(const QString& text, const QString& toolTip) {
    extraToolTip_ = toolTip;
    setText(text);
    updateToolTip();
}

QString ElidingLabel::shownText() const {
    return fontMetrics().elidedText(text(), Qt::ElideRight, contentsRect().width());
}

QSize ElidingLabel::minimumSizeHint() const {
    const QMargins m = contentsMargins();
    const int few = fontMetrics().horizontalAdvance(text().left(4) + QChar(0x2026));
    return {std::min(few + m.left() + m.right(), sizeHint().width()), QLabel::minimumSizeHint().height()};
}

void ElidingLabel::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    updateToolTip();
}

void ElidingLabel::paintEvent(QPaintEvent*) {
    QPainter p(this);
    style()->drawItemText(&p, contentsRect(), int(alignment()), palette(), isEnabled(), shownText(), foregroundRole());
}

void ElidingLabel::updateToolTip() {
    const bool cut = shownText() != text();
    setToolTip(cut ? (extraToolTip_.isEmpty() ? text() : text() + QLatin1Char('\n') + extraToolTip_) : extraToolTip_);
}

ChatStatus::ChatStatus(QWidget* parent)
    : QWidget(parent),
      model_(new ElidingLabel),
      speed_(new QLabel),
      context_(new QLabel),
      meter_(new QProgressBar),
      kv_(new ElidingLabel),
      kvDetails_(new QToolButton),
      spec_(new ElidingLabel) {
    model_->setObjectName("statusModel");
    speed_->setObjectName("statusSpeed");
    context_->setObjectName("statusContext");
    meter_->setObjectName("contextMeter");
    kv_->setObjectName("statusKv");
    spec_->setObjectName("statusSpec");
    meter_->setTextVisible(false);
    meter_->setFixedWidth(120);
    meter_->setFixedHeight(10);
    // Ignored: the name gets what the other fields leave (it is elided first), but never less
    // than a few characters.
    model_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    model_->setMinimumWidth(model_->fontMetrics().averageCharWidth() * 10);
    for (QLabel* fixed : {speed_, context_}) fixed->setSizePolicy(QSizePolicy::Minimum, QSizePolicy::Preferred);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 2, 8, 2);
    layout->setSpacing(12);
    layout->addWidget(model_, 1);
    layout->addWidget(speed_);
    layout->addWidget(spec_);
    layout->addWidget(context_);
    layout->addWidget(meter_);
    layout->addWidget(kv_);
    kvDetails_->setObjectName("statusKvDetails");
    kvDetails_->setText(tr("Details…"));
    kvDetails_->setAutoRaise(true);
    kvDetails_->hide();
    layout->addWidget(kvDetails_);
    connect(kvDetails_, &QToolButton::clicked, this,
            [this] { showTechnicalDetails(window(), kvDetailsText_, kv_->text()); });
    setContext(0, 0);
}

void ChatStatus::setModel(const LoadedModel& m) {
    if (m.backendNote.isEmpty()) model_->setFullText(tr("%1 · %2").arg(m.file.name, m.backend), m.file.path);
    else  // said once, here: e.g. the CPU lacks AVX2 and the slow reference kernels run
        model_->setFullText(tr("%1 · %2 (%3)").arg(m.file.name, m.backend, m.backendNote), m.file.path);
    speed_->clear();
    kv_->setFullText({});
    setKvDetails({});
    spec_->setFullText({});
    setContext(0, m.contextLength);
    meter_->show();
}

void ChatStatus::setRemote(const QString& model, const QString& address) {
    model_->setFullText(tr("%1 · remote server").arg(model), address);
    speed_->clear();
    spec_->setFullText({});
    kv_->setFullText(tr("KV: none here (the remote server keeps it)"));
    setKvDetails({});
    setContext(0, 0);
    meter_->hide();  // the server's context length is not known here
}

void ChatStatus::setMessage(const QString& text) { model_->setFullText(text); }

void ChatStatus::replyStarted(const ReplyStarted& info) {
    streaming_ = info;
    speed_->clear();
    setContext(info.promptTokens, info.contextLength);
}

void ChatStatus::replyProgress(int generatedTokens, double tokensPerSecond) {
    setContext(streaming_.promptTokens + generatedTokens, streaming_.contextLength);
    if (tokensPerSecond <= 0) return;
    speed_->setText(tr("%1 tok/s").arg(QLocale().toString(tokensPerSecond, 'f', 1)));
    speed_->setToolTip(tr("%n token(s) so far", nullptr, generatedTokens));
}

void ChatStatus::replyFinished(const ReplyStats& s) {
    speed_->setText(tr("%1 tok/s · first token %2 ms")
                        .arg(QLocale().toString(s.tokensPerSecond, 'f', 1), QLocale().toString(s.ttftMs, 'f', 0)));
    speed_->setToolTip({});
    setContext(s.promptTokens + s.generatedTokens, s.contextLength);
    spec_->setFullText(s.specDrafted >= 0
                           ? tr("spec: accepted %1 of %2 drafted")
                                 .arg(QLocale().toString(s.specAccepted), QLocale().toString(s.specDrafted))
                           : QString());
    setKvDetails({});
    if (!s.remoteEndpoint.isEmpty()) {
        kv_->setFullText(tr("Remote reply on %1: no local KV to save").arg(s.remoteEndpoint));
        return;
    }
    if (s.kvRefusal != KvRefusal::None && s.kvRestoredTokens == 0) {
        // In plain words from the refusal's kind; the engine's reason behind Details….
        kv_->setFullText(kvRefusalSummary(s.kvRefusal, s.promptTokens - s.reusedTokens));
        setKvDetails(s.kvNote);
        return;
    }
    if (s.kvRestoredTokens > 0) {
        showRestored(s.kvRestoredTokens, s.kvSavedSeconds);
        return;
    }
    if (s.reusedTokens > 0) {
        kv_->setFullText(tr("KV reused: %1 of %2 prompt tokens")
                             .arg(QLocale().toString(s.reusedTokens), QLocale().toString(s.promptTokens)),
                         s.kvNote);
        return;
    }
    // Why nothing came from the store, when something was refused or failed.
    kv_->setFullText(
        s.kvNote.isEmpty() ? tr("KV: computed in full") : tr("KV: computed in full (%1)").arg(s.kvNote.left(80)),
        s.kvNote);
}

void ChatStatus::showRestored(int kvRestoredTokens, double savedSeconds) {
    const QString n = QLocale().toString(kvRestoredTokens);
    // Under 0.05 s reads "~0.0 s": nothing worth a figure.
    kv_->setFullText(savedSeconds >= 0.05
                         ? tr("KV restored: %1 tokens (saved ~%2 s)").arg(n, QLocale().toString(savedSeconds, 'f', 1))
                         : tr("KV restored: %1 tokens").arg(n));
}

void ChatStatus::showConversation(int contextUsed, int contextLength) {
    speed_->clear();
    speed_->setToolTip({});
    kv_->setFullText({});
    setKvDetails({});
    spec_->setFullText({});
    setContext(contextUsed, contextLength);
}

void ChatStatus::setContext(int used, int total) {
    if (total <= 0 && used <= 0) {  // no model: no figure to show ("context 0 / 0" says nothing)
        context_->clear();
        meter_->hide();
        return;
    }
    if (total <= 0 && used > 0) context_->setText(tr("context %1").arg(QLocale().toString(used)));
    else context_->setText(tr("context %1 / %2").arg(QLocale().toString(used), QLocale().toString(total)));
    meter_->setRange(0, std::max(1, total));
    meter_->setValue(std::min(used, std::max(1, total)));
}

void ChatStatus::setKvDetails(const QString& details) {
    kvDetailsText_ = details;
    kvDetails_->setVisible(!details.isEmpty());
}

}  // namespace hearth
