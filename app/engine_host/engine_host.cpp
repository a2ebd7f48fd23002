// Engine thread plumbing: queued invocations in, step()s driven by queued events so that
// stop and new requests interleave with generation, text flushed to the GUI once per frame.
#include "app/engine_host/engine_host.h"

#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>

#include "app/common/error_text.h"
#include "app/store/conversation_store.h"
#include "app/store/kv_block_store.h"
#include "engine/engine.h"

namespace hearth {

namespace {

constexpr int kFrameMs = 16;

// The request's conversation as chat messages: the settings' system prompt, when set, first.
std::vector<ChatMessage> chatMessagesOf(const ReplyRequest& r) {
    std::vector<ChatMessage> out;
    if (!r.settings.systemPrompt.isEmpty()) out.push_back({ChatRole::System, r.settings.systemPrompt.toStdString()});
    for (const ChatTurn& t : r.turns) out.push_back({t.role, t.content.toStdString()});
    return out;
}

}  // namespace

EngineWorker::EngineWorker(const std::atomic<quint64>& cancelledLoad) : cancelledLoad_(cancelledLoad) {
    sinceFlush_.start();
}
EngineWorker::~EngineWorker() = default;

// Reads the file once in chunks before mapping it: on a cold disk this is where the time
// goes, so it gives an honest progress bar and a point to cancel between chunks.
bool EngineWorker::pageIn(const QString& path, quint64 serial) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return true;  // Engine::load reports why
    const qint64 size = std::max<qint64>(1, f.size());
    QByteArray buffer(8 << 20, Qt::Uninitialized);
    qint64 done = 0;
    int lastPercent = -1;
    for (qint64 n; (n = f.read(buffer.data(), buffer.size())) > 0;) {
        if (cancelledLoad_.load() == serial) return false;
        done += n;
        const int percent = static_cast<int>(done * 90 / size);
        if (percent != lastPercent) emit loadProgress(lastPercent = percent);
    }
    return true;
}

void EngineWorker::loadModel(const QString& path, LoadOptions options, quint64 serial) {
    emit loadProgress(0);
    if (!pageIn(path, serial)) {
        emit loadCancelled();
        return;
    }
    EngineOptions engineOptions;
    engineOptions.contextLength = options.contextLength;
    engineOptions.nThreads = options.threads;  // <= 0: one per physical core
    engineOptions.kvType = parseKvElementType(options.kvType.toStdString()).value_or(KvElementType::F16);
    engineOptions.backend = options.backend;
    if (options.maxRunning > 0) engineOptions.scheduler.maxRunning = options.maxRunning;
    if (store_)  // cached by (path, size, mtime): the file is hashed only when it changed
        if (auto fp = store_->kv().modelFingerprint(path.toStdString())) engineOptions.modelFingerprint = *fp;
    // Reading the file was 0-90%; the backend laying out the weights (the CPU's repacking) 90-99%.
    int lastPercent = 90;
    engineOptions.loadProgress = [&](int done, int total) {
        const int percent = 90 + done * 9 / std::max(1, total);
        if (percent != lastPercent) emit loadProgress(lastPercent = percent);
    };
    auto engine = Engine::load(path.toStdString(), engineOptions);
    if (cancelledLoad_.load() == serial) {
        emit loadCancelled();
        return;
    }
    if (!engine) {
        emit loadFailed(describe(engine.error()), userSummary(engine.error()));
        return;
    }
    failAll(tr("The model was changed before this reply finished."));
    engine_ = std::move(*engine);
    if (const std::string& note = engine_->packCacheReport().note; !note.empty()) qWarning("hearth: %s", note.c_str());
    model_ = LoadedModel{.file = describeModel(engine_->file(), &engine_->chatFormat()),
                         .backend = QString::fromStdString(engine_->backendName()),
                         .backendNote = QString::fromStdString(engine_->backendNote()),
                         .contextLength = engine_->contextLength(),
                         .reasoning = engine_->chatFormat().reasoningSpan(),
                         .thinking = engine_->chatFormat().thinkingMode()};
    emit loadProgress(100);
    emit modelLoaded(model_);
    startHistoryFeed();
}

void EngineWorker::failAll(const QString& message) {
    for (const auto& [id, a] : active_) {
        if (a.sink) a.sink->failed(Error{ErrorCode::Cancelled, message.toStdString()});
        else emit replyFailed(a.ticket, message);
    }
    active_.clear();
}

void EngineWorker::submit(const ReplyRequest& r) {
    if (!engine_) {
        emit replyFailed(r.ticket, tr("No model is loaded. Choose one with Model → Open."));
        return;
    }
    TurnInput input{chatMessagesOf(r), {}, r.conversationId, true, r.settings.thinking};
    GenerateRequest& g = input.request;
    g.maxTokens = r.settings.maxTokens;
    g.sampling = r.settings.sampling;
    g.sampling.seed =
        r.settings.seed >= 0 ? static_cast<uint64_t>(r.settings.seed) : QRandomGenerator::global()->generate64();
    for (const QString& s : r.settings.stop) g.stop.push_back(s.toStdString());
    g.spec = r.spec;
    auto turn = startTurn(*engine_, store_ ? &store_->kv() : nullptr, std::move(input));
    if (!turn) {
        emit replyFailed(r.ticket, describe(turn.error()));
        return;
    }
    if (!turn->restore.refusal.empty())
        qWarning("hearth: conversation %lld: %s; recomputed", static_cast<long long>(r.conversationId),
                 turn->restore.refusal.c_str());
    const ReplyStarted started{.ticket = r.ticket,
                               .promptTokens = static_cast<int>(turn->prompt.size()),
                               .contextLength = engine_->contextLength(),
                               .omittedTurns = turn->omittedTurns};
    std::string userText;
    for (const ChatTurn& t : r.turns)
        if (t.role == ChatRole::User) userText = t.content.toStdString();
    active_[turn->id] = Active{.ticket = r.ticket,
                               .turn = std::move(*turn),
                               .speculating = r.spec.drafter != SpecDrafter::Off,
                               .userText = std::move(userText)};
    emit replyStarted(started);
    scheduleStep();
}

void EngineWorker::stop(quint64 ticket) {
    for (const auto& [id, a] : active_)
        if (a.ticket == ticket && engine_) engine_->cancel(id);
    scheduleStep();
}

void EngineWorker::submitSink(SinkReply reply) {
    if (!engine_) {
        reply.failed(Error{ErrorCode::InvalidArgument, "no model is loaded"});
        return;
    }
    auto turn = startTurn(*engine_, nullptr, std::move(reply.input));
    if (!turn) {
        reply.failed(turn.error());
        return;
    }
    reply.started(*turn);
    const RequestId id = turn->id;
    active_[id] =
        Active{.ticket = 0, .turn = std::move(*turn), .sink = std::make_shared<const SinkReply>(std::move(reply))};
    scheduleStep();
}

void EngineWorker::cancelRequest(int64_t requestId) {
    if (engine_ && active_.contains(requestId)) engine_->cancel(static_cast<RequestId>(requestId));
    scheduleStep();
}

std::optional<EngineMetrics> EngineWorker::metrics() const {
    if (!engine_) return std::nullopt;
    return engine_->metrics();
}

// One step per queued event: anything queued meanwhile (stop, submit, load) runs in between.
void EngineWorker::scheduleStep() {
    if (stepQueued_) return;
    stepQueued_ = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            stepQueued_ = false;
            runStep();
        },
        Qt::QueuedConnection);
}

void EngineWorker::runStep() {
    if (!engine_ || active_.empty()) return;
    for (EngineEvent& ev : engine_->step()) {
        const auto it = active_.find(ev.request);
        if (it == active_.end()) continue;
        Active& a = it->second;
        if (a.sink) {  // per event, not per frame: a server client streams each token as it comes
            a.sink->event(*engine_, ev);
            if (ev.kind == EngineEvent::Kind::Finish) active_.erase(it);
            continue;
        }
        a.pending += QString::fromUtf8(ev.text.data(), static_cast<qsizetype>(ev.text.size()));
        const bool finished = a.turn.take(ev);
        if (!a.sinceFirstToken.isValid() && !a.turn.tokens.empty()) a.sinceFirstToken.start();
        if (!finished) continue;
        if (!a.pending.isEmpty()) emit textReady(a.ticket, a.pending);
        if (a.turn.reason == FinishReason::Error) {
            emit replyFailed(a.ticket, a.turn.error ? describe(*a.turn.error) : tr("The engine failed."));
        } else {
            emit replyFinished(finishedStats(a));
            addToHistory(a);
            saveKv(a);  // after the GUI has the reply: a long save delays only the next request
        }
        active_.erase(it);
    }
    if (sinceFlush_.elapsed() >= kFrameMs) flush();
    if (!active_.empty()) scheduleStep();
}

void EngineWorker::flush() {
    for (auto& [id, a] : active_) {
        if (a.pending.isEmpty()) continue;
        emit textReady(a.ticket, a.pending);
        a.pending.clear();
        const auto nTokens = static_cast<int>(a.turn.tokens.size());
        const qint64 ms = a.sinceFirstToken.isValid() ? a.sinceFirstToken.elapsed() : 0;
        emit replyProgress(a.ticket, nTokens, ms > 0 && nTokens > 1 ? (nTokens - 1) * 1000.0 / double(ms) : 0.0);
    }
    sinceFlush_.restart();
}

EngineHost::EngineHost(QObject* parent) : ReplyEngine(parent), worker_(new EngineWorker(cancelledLoad_)) {
    qRegisterMetaType<LoadOptions>();
    qRegisterMetaType<KvStoreOptions>();
    qRegisterMetaType<LoadedModel>();
    qRegisterMetaType<ReplyRequest>();
    qRegisterMetaType<ReplyStarted>();
    qRegisterMetaType<ReplyStats>();
    // Queued (the worker lives on the engine thread): re-emitted here on the GUI thread.
    connect(worker_, &EngineWorker::replyStarted, this, &ReplyEngine::replyStarted);
    connect(worker_, &EngineWorker::textReady, this, &ReplyEngine::textReady);
    connect(worker_, &EngineWorker::replyProgress, this, &ReplyEngine::replyProgress);
    connect(worker_, &EngineWorker::replyFinished, this, &ReplyEngine::replyFinished);
    connect(worker_, &EngineWorker::replyFailed, this, &ReplyEngine::replyFailed);
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    thread_.setObjectName("hearth-engine");
    thread_.start();
}

// Quitting during generation: the loop ends after the current step; the worker (and the
// engine with it) is deleted on its own thread before wait() returns.
EngineHost::~EngineHost() {
    cancelLoad();
    thread_.quit();
    thread_.wait();
}

void EngineHost::loadModel(const QString& path, const LoadOptions& options) {
    const quint64 serial = ++loadSerial_;
    QMetaObject::invokeMethod(
        worker_, [w = worker_, path, options, serial] { w->loadModel(path, options, serial); }, Qt::QueuedConnection);
}

void EngineHost::useKvStore(const KvStoreOptions& options) {
    QMetaObject::invokeMethod(
        worker_, [w = worker_, options] { w->openKvStore(options); }, Qt::QueuedConnection);
}

void EngineHost::setKvDiskBudget(qint64 bytes) {
    QMetaObject::invokeMethod(
        worker_, [w = worker_, bytes] { w->setKvDiskBudget(bytes); }, Qt::QueuedConnection);
}

quint64 EngineHost::generate(ReplyRequest request) {
    if (request.ticket == 0) request.ticket = nextTicket_++;
    const quint64 ticket = request.ticket;
    QMetaObject::invokeMethod(
        worker_, [w = worker_, r = std::move(request)] { w->submit(r); }, Qt::QueuedConnection);
    return ticket;
}

void EngineHost::stop(quint64 ticket) {
    QMetaObject::invokeMethod(
        worker_, [w = worker_, ticket] { w->stop(ticket); }, Qt::QueuedConnection);
}

void EngineHost::submit(SinkReply reply) {
    QMetaObject::invokeMethod(
        worker_, [w = worker_, r = std::move(reply)]() mutable { w->submitSink(std::move(r)); }, Qt::QueuedConnection);
}

void EngineHost::cancelRequest(int64_t requestId) {
    QMetaObject::invokeMethod(
        worker_, [w = worker_, requestId] { w->cancelRequest(requestId); }, Qt::QueuedConnection);
}

}  // namespace hearth
