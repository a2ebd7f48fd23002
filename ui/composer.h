// The message box under the conversation: multi-line input where Enter sends and Shift+Enter
// adds a line, a Send button that becomes Stop while a reply streams, Regenerate, and an
// editing mode (after "Edit" on a message) in which Send creates a new branch.
#pragma once

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QPushButton;

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

signals:
    void sendRequested(const QString& text);
    void editRequested(qint64 messageId, const QString& text);
    void stopRequested();
    void regenerateRequested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void submit();

    QPlainTextEdit* input_;
    QPushButton* send_;
    QPushButton* regenerate_;
    QLabel* editBanner_;
    QPushButton* cancelEdit_;
    qint64 editing_ = 0;
    bool generating_ = false;
    bool ready_ = false;
    bool hasReply_ = false;
};

}  // namespace hearth
