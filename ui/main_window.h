// The main window: a minimal chat until the chat-window issue (#7) — a transcript, a
// composer with Send/Stop, and a status line with the model and the last reply's speed.
#pragma once

#include <QMainWindow>
#include <QStringList>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTextBrowser;

namespace hearth {

class EngineHost;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(EngineHost& host, QWidget* parent = nullptr);

    // Sends the composer's text as the user's next message (also what Enter does).
    void send();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void appendText(const QString& text);
    void setGenerating(bool generating);
    void renderTranscript();

    EngineHost& host_;
    QTextBrowser* transcript_;
    QPlainTextEdit* composer_;
    QPushButton* sendButton_;
    QLabel* status_;
    QStringList roles_, contents_;
    bool generating_ = false;
    bool modelReady_ = false;
};

}  // namespace hearth
