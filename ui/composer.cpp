// Key handling lives in an event filter on the input so the text edit keeps everything else.
#include "ui/composer.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QIcon>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/appearance.h"

namespace hearth {

Composer::Composer(QWidget* parent)
    : QWidget(parent),
      input_(new QPlainTextEdit),
      send_(new QPushButton(tr("Send"))),
      regenerate_(new QPushButton(tr("Regenerate"))),
      editBanner_(new QLabel),
      cancelEdit_(new QPushButton(tr("Cancel edit"))),
      attach_(new QToolButton),
      attachments_(new QLabel),
      manageAttachments_(new QToolButton),
      attachmentsMenu_(new QMenu(this)) {
    input_->setObjectName("composer");
    send_->setObjectName("sendButton");
    regenerate_->setObjectName("regenerateButton");
    send_->setIcon(themeIcon(QStringLiteral("mail-send")));
    regenerate_->setIcon(themeIcon(QStringLiteral("view-refresh")));
    editBanner_->setObjectName("editBanner");
    input_->setPlaceholderText(tr("Message Hearth… (Enter sends, Shift+Enter adds a line)"));
    input_->setFixedHeight(input_->fontMetrics().lineSpacing() * 4 + 12);
    input_->setTabChangesFocus(true);
    input_->installEventFilter(this);
    editBanner_->setText(tr("Editing a message: Send keeps both versions as branches."));
    auto* editRow = new QHBoxLayout;
    editRow->addWidget(editBanner_, 1);
    editRow->addWidget(cancelEdit_);
    attach_->setObjectName("attachButton");
    // The theme's paperclip where there is one; the word where not (an emoji needs a font that
    // has it, and offscreen or minimal desktops often lack one).
    attach_->setIcon(themeIcon(QStringLiteral("mail-attachment")));
    attach_->setText(tr("Attach…"));
    attach_->setToolButtonStyle(attach_->icon().isNull() ? Qt::ToolButtonTextOnly : Qt::ToolButtonIconOnly);
    attach_->setToolTip(tr("Attach documents (text, Markdown, source code, PDF)…"));
    attach_->setAutoRaise(true);
    attachments_->setObjectName("attachmentsLabel");
    attachments_->setWordWrap(true);
    attachments_->hide();
    manageAttachments_->setObjectName("manageAttachmentsButton");
    manageAttachments_->setText(tr("Remove…"));
    manageAttachments_->setToolTip(tr("Remove an attached document from this conversation"));
    manageAttachments_->setPopupMode(QToolButton::InstantPopup);
    manageAttachments_->setAutoRaise(true);
    manageAttachments_->setMenu(attachmentsMenu_);
    manageAttachments_->hide();
    auto* attachmentsRow = new QHBoxLayout;
    attachmentsRow->addWidget(attachments_, 1);
    attachmentsRow->addWidget(manageAttachments_, 0, Qt::AlignTop);
    auto* buttons = new QVBoxLayout;
    buttons->addWidget(send_);
    buttons->addWidget(regenerate_);
    buttons->addStretch();
    auto* row = new QHBoxLayout;
    row->addWidget(attach_, 0, Qt::AlignTop);
    row->addWidget(input_, 1);
    row->addLayout(buttons);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 4);
    layout->addLayout(editRow);
    layout->addLayout(attachmentsRow);
    layout->addLayout(row);
    editBanner_->hide();
    cancelEdit_->hide();
    setReady(false);
    connect(send_, &QPushButton::clicked, this, [this] { generating_ ? emit stopRequested() : submit(); });
    connect(regenerate_, &QPushButton::clicked, this, &Composer::regenerateRequested);
    connect(cancelEdit_, &QPushButton::clicked, this, &Composer::cancelEdit);
    connect(attach_, &QToolButton::clicked, this, &Composer::attachRequested);
}

void Composer::setAttachments(const QString& summary) {
    attachments_->setText(summary);
    attachments_->setVisible(!summary.isEmpty());
    manageAttachments_->setVisible(!summary.isEmpty());
}

bool Composer::eventFilter(QObject* watched, QEvent* event) {
    if (watched == input_ && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        const bool enter = key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter;
        if (enter && !(key->modifiers() & Qt::ShiftModifier)) {
            if (!generating_) submit();
            return true;
        }
        if (key->key() == Qt::Key_Escape && editing_) {
            cancelEdit();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void Composer::submit() {
    const QString text = input_->toPlainText().trimmed();
    if (text.isEmpty() || generating_ || !ready_) return;
    input_->clear();
    if (editing_) {
        const qint64 id = editing_;
        cancelEdit();
        emit editRequested(id, text);
    } else {
        emit sendRequested(text);
    }
}

void Composer::setGenerating(bool generating) {
    generating_ = generating;
    send_->setText(generating ? tr("Stop") : tr("Send"));
    send_->setIcon(themeIcon(generating ? QStringLiteral("media-playback-stop") : QStringLiteral("mail-send")));
    send_->setToolTip(generating ? tr("Stop the reply (Esc)") : tr("Send (Enter)"));
    regenerate_->setEnabled(!generating && ready_ && hasReply_);
}

void Composer::setReady(bool ready) {
    ready_ = ready;
    send_->setEnabled(ready);
    regenerate_->setEnabled(ready && !generating_ && hasReply_);
}

void Composer::setHasReply(bool hasReply) {
    hasReply_ = hasReply;
    regenerate_->setEnabled(ready_ && !generating_ && hasReply_);
}

void Composer::beginEdit(qint64 messageId, const QString& text) {
    editing_ = messageId;
    input_->setPlainText(text);
    editBanner_->show();
    cancelEdit_->show();
    focusInput();
}

void Composer::cancelEdit() {
    if (editing_) input_->clear();
    editing_ = 0;
    editBanner_->hide();
    cancelEdit_->hide();
}

void Composer::focusInput() {
    input_->setFocus();
    input_->moveCursor(QTextCursor::End);
}

}  // namespace hearth
