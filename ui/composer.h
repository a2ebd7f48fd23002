// The message box under the conversation: multi-line input where Enter sends and Shift+Enter
// adds a line, a Send button that becomes Stop while a reply streams, Regenerate, and an
// editing mode (after "Edit" on a message) in which Send creates a new branch; a paperclip that
// asks for documents to attach, and the line naming the attached ones with their token budget.
#pragma once

#include <QWidget>

class QLabel;
class QMenu;
class QPlainTextEdit;
class QPushButton;
class QToolButton;

namespace hearth {

class Composer : public QWidget {
    Q_OBJECT
public:
    explicit Composer(QWidget* parent = nullptr);

    void setGenerating(bool generating);
    void setReady(bool ready);  // a model is loaded
    void setHasReply(bool hasReply);  // the open conversation has a reply to regenerate
    void beginEdit(qint64 messageId, const QString& text);
    void cancelEdit();
    void focusInput();
    QPlainTextEdit* input() const { return input_; }
    // The attached documents' line (AttachmentController::summary()) and the button beside it
    // whose menu removes one (filled by its owner on aboutToShow); hidden when empty.
    void setAttachments(const QString& summary);
    QMenu* attachmentsMenu() const { return attachmentsMenu_; }

signals:
    void sendRequested(const QString& text);
    void editRequested(qint64 messageId, const QString& text);
    void stopRequested();
    void regenerateRequested();
    void attachRequested();  // the paperclip

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void submit();

    QPlainTextEdit* input_;
    QPushButton* send_;
    QPushButton* regenerate_;
    QLabel* editBanner_;
    QPushButton* cancelEdit_;
    QToolButton* attach_;
    QLabel* attachments_;
    QToolButton* manageAttachments_;
    QMenu* attachmentsMenu_;
    qint64 editing_ = 0;
    bool generating_ = false;
    bool ready_ = false;
    bool hasReply_ = false;
};

}  // namespace hearth
