// The engine on its own thread. The GUI talks to it only through queued calls (the public
// slots, invoked across threads) and its signals; generated text arrives in batches of about
// one per frame, never per token. Stop takes effect at the next token.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>
#include <memory>
#include <vector>

#include "engine/tokenizer/chat_format.h"

namespace hearth {

class Engine;

// Lives on the engine thread; owns the Engine.
class EngineWorker : public QObject {
    Q_OBJECT
public:
    explicit EngineWorker(std::atomic<bool>& stopFlag);
    ~EngineWorker() override;

public slots:
    void loadModel(const QString& path);
    // roles/contents: the whole conversation so far, ending with the user's message.
    void generate(const QStringList& roles, const QStringList& contents);

signals:
    void modelLoaded(const QString& description);
    void loadFailed(const QString& message);
    void textReady(const QString& text);  // a batch of reply text
    void replyFinished(const QString& summary);
    void replyFailed(const QString& message);

private:
    std::unique_ptr<Engine> engine_;
    std::atomic<bool>& stop_;
};

// Owned by the GUI thread: starts the thread, forwards requests, stops and joins on exit.
class EngineHost : public QObject {
    Q_OBJECT
public:
    explicit EngineHost(QObject* parent = nullptr);
    ~EngineHost() override;

    EngineWorker* worker() const { return worker_; }
    void loadModel(const QString& path);
    void generate(const QStringList& roles, const QStringList& contents);
    void stop() { stop_ = true; }

private:
    QThread thread_;
    EngineWorker* worker_;
    std::atomic<bool> stop_{false};
};

}  // namespace hearth
