// The status line under the conversation: model and backend, the last reply's tokens/s and
// time to first token, context used (tokens and a meter), and how much of the prompt's KV was
// reused or restored instead of computed, and what speculative decoding drafted and kept.
#pragma once

#include <QWidget>

#include "app/engine_host/engine_host.h"

class QLabel;
class QProgressBar;

namespace hearth {

class ChatStatus : public QWidget {
    Q_OBJECT
public:
    explicit ChatStatus(QWidget* parent = nullptr);

    void setModel(const LoadedModel& model);
    void setMessage(const QString& text);  // e.g. "Loading…", a load error
    void replyStarted(const ReplyStarted& info);
    void replyFinished(const ReplyStats& stats);
    // "KV restored: N tokens (saved ~X s)"; savedSeconds < 0: unknown, left out.
    void showRestored(int kvRestoredTokens, double savedSeconds);

private:
    void setContext(int used, int total);

    QLabel* model_;
    QLabel* speed_;
    QLabel* context_;
    QProgressBar* meter_;
    QLabel* kv_;
    QLabel* spec_;
};

}  // namespace hearth
