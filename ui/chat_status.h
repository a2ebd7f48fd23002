// The status line under the conversation: model and backend, the reply's tokens/s (live while it
// streams) and time to first token, context used (tokens and a meter), and how much of the
// prompt's KV was reused or restored instead of computed, and what speculative decoding drafted
// and kept. When the window is narrow the long fields are elided (the model name first), each
// with its whole text in a tooltip.
#pragma once

#include <QLabel>
#include <QWidget>

#include "app/engine_host/engine_host.h"

class QProgressBar;
class QToolButton;

namespace hearth {

// A one-line label that paints as much of its text as fits, ending in "…", with the whole
// text in its tooltip when cut; text() stays the whole text. Its minimum width is a few
// characters, so a layout can shrink it.
class ElidingLabel : public QLabel {
public:
    explicit ElidingLabel(QWidget* parent = nullptr);
    void setFullText(const QString& text, const QString& toolTip = {});  // toolTip: shown besides
    QString shownText() const;  // what is painted at the current width
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    void updateToolTip();

    QString extraToolTip_;
};

class ChatStatus : public QWidget {
    Q_OBJECT
public:
    explicit ChatStatus(QWidget* parent = nullptr);

    void setModel(const LoadedModel& model);
    // Replies run on a remote server: its model and address; no local KV (said in the KV field).
    void setRemote(const QString& model, const QString& address);
    void setMessage(const QString& text);  // e.g. "Loading…", a load error
    void replyStarted(const ReplyStarted& info);
    void replyProgress(int generatedTokens, double tokensPerSecond);  // while the reply streams
    void replyFinished(const ReplyStats& stats);
    // "KV restored: N tokens (saved ~X s)"; savedSeconds < 0.05: unknown or nothing, left out.
    void showRestored(int kvRestoredTokens, double savedSeconds);
    // Another conversation is open: the last reply's figures go, the context shows its own.
    void showConversation(int contextUsed, int contextLength);
    void setContext(int used, int total);

private:
    void setKvDetails(const QString& details);  // empty: the button goes

    ElidingLabel* model_;
    QLabel* speed_;
    QLabel* context_;
    QProgressBar* meter_;
    ElidingLabel* kv_;
    QToolButton* kvDetails_;  // "Details…" beside a KV refusal: its technical reason
    QString kvDetailsText_;
    ElidingLabel* spec_;
    ReplyStarted streaming_;  // the reply in flight: its prompt and context, for the live meter
};

}  // namespace hearth
