// Engine thread plumbing: queued invocations in, batched signals out.
#include "app/engine_host.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include "app/error_text.h"
#include "engine/engine.h"

namespace hearth {

EngineWorker::EngineWorker(std::atomic<bool>& stopFlag) : stop_(stopFlag) {}
EngineWorker::~EngineWorker() = default;

void EngineWorker::loadModel(const QString& path) {
    engine_.reset();
    auto engine = Engine::load(path.toStdString(), EngineOptions{});
    if (!engine) {
        emit loadFailed(describe(engine.error()));
        return;
    }
    engine_ = std::move(*engine);
    const QString name = QString::fromStdString(engine_->config().name);
    emit modelLoaded(QStringLiteral("%1 — %2").arg(name.isEmpty() ? QFileInfo(path).fileName() : name,
                                                   QString::fromStdString(engine_->backendName())));
}

void EngineWorker::generate(const QStringList& roles, const QStringList& contents) {
    if (!engine_) {
        emit replyFailed(tr("No model is loaded."));
        return;
    }
    stop_ = false;
    std::vector<ChatMessage> messages;
    for (qsizetype i = 0; i < roles.size() && i < contents.size(); ++i)
        messages.push_back({roles[i].toStdString(), contents[i].toStdString()});
    GenerateRequest req;
    req.prompt = engine_->chatPrompt(messages);
    req.maxTokens = 512;
    QString pending;
    QElapsedTimer frame;
    frame.start();
    auto result = engine_->generate(req, [&](TokenId, std::string_view piece) {
        pending += QString::fromUtf8(piece.data(), static_cast<qsizetype>(piece.size()));
        if (frame.elapsed() >= 16 && !pending.isEmpty()) {  // about one batch per frame
            emit textReady(pending);
            pending.clear();
            frame.restart();
        }
        return !stop_.load();
    });
    if (!pending.isEmpty()) emit textReady(pending);
    if (!result) {
        emit replyFailed(describe(result.error()));
        return;
    }
    const GenerateTimings& t = result->timings;
    const double tps = t.decodeMs > 0 ? t.decodeTokens / t.decodeMs * 1000.0 : 0.0;
    emit replyFinished(tr("%1 tok/s · first token %2 ms · %3")
                           .arg(tps, 0, 'f', 1)
                           .arg(t.ttftMs, 0, 'f', 0)
                           .arg(QString::fromLatin1(finishReasonName(result->finishReason))));
}

EngineHost::EngineHost(QObject* parent) : QObject(parent), worker_(new EngineWorker(stop_)) {
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    thread_.setObjectName("hearth-engine");
    thread_.start();
}

EngineHost::~EngineHost() {
    stop_ = true;
    thread_.quit();
    thread_.wait();
}

void EngineHost::loadModel(const QString& path) {
    QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection, Q_ARG(QString, path));
}

void EngineHost::generate(const QStringList& roles, const QStringList& contents) {
    QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection, Q_ARG(QStringList, roles),
                              Q_ARG(QStringList, contents));
}

}  // namespace hearth
