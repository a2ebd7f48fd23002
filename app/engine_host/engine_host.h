// The engine on its own thread. The GUI talks to it only through EngineHost (queued calls to
// the worker) and the worker's signals, which arrive on the GUI thread as queued events.
// Replies run through Engine::submit/step, so a stop or a new request takes effect at the next
// step; generated text leaves the worker in batches of about one per frame (16 ms), never per
// token. Loading reports progress and can be cancelled; a cancelled load keeps the old model.
// Each reply is a turn of app/chat/turn_pipeline.h (trim, restore, submit, stats, save); its
// KV persistence runs on the engine thread too, over the worker's own store connection: the
// blocks (megabytes) never cross to the GUI thread, which only sees the counts in ReplyStats.
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>
#include <functional>
#include <optional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "app/chat/chat_settings.h"
#include "app/chat/turn_pipeline.h"
#include "app/engine_host/reply_engine.h"
#include "app/common/model_info.h"
#include "engine/engine.h"
#include "engine/spec/spec_options.h"
#include "engine/tokenizer/chat_format.h"

namespace hearth {

class ConversationStore;

struct LoadOptions {
    int contextLength = 0;  // 0: the model's own
    int threads = 0;  // 0: one per physical core
    QString kvType = "f16";  // "f16" or "q8_0"
    // Best: CUDA where a usable GPU is found, else the fastest CPU backend (EngineOptions).
    EngineOptions::BackendKind backend = EngineOptions::BackendKind::Best;
    int maxRunning = 0;  // sequences decoding together (SchedulerConfig::maxRunning); 0: its default
};

// The store the worker opens on the engine thread (its own connection to the GUI's database):
// saved KV blocks and the model fingerprint cache. Empty path: no KV persistence.
struct KvStoreOptions {
    QString path;
    qint64 diskBudgetBytes = 0;
};

struct LoadedModel {
    ModelFileInfo file;
    QString backend;  // e.g. "CPU (AVX2)"
    QString backendNote;  // why not the backend asked for or a fast one, e.g. "CPU lacks AVX2 ..."; usually empty
    int contextLength = 0;  // the engine's (LoadOptions or the model's)
    // The chat format's reasoning span and switch (Qwen 3, DeepSeek-R1 distills; nullopt / None otherwise).
    std::optional<ReasoningSpan> reasoning;
    ThinkingMode thinking = ThinkingMode::None;
};

// A reply for another front end (the local server): the same turn pipeline and the same steps
// as the window's replies, but its events go to these callbacks instead of the signals. They
// run on the engine thread, between steps, and must return quickly.
struct SinkReply {
    TurnInput input;
    std::function<void(const Turn&)> started;  // submitted: its id and prompt
    std::function<void(const Engine&, const EngineEvent&)> event;  // every event, Finish last
    // Not submitted (the message says why), or dropped because the model changed: no event follows.
    std::function<void(const Error&)> failed;
};

// Lives on the engine thread; owns the Engine. Call only through EngineHost.
class EngineWorker : public QObject {
    Q_OBJECT
public:
    explicit EngineWorker(const std::atomic<quint64>& cancelledLoad);
    ~EngineWorker() override;

    Q_INVOKABLE void loadModel(const QString& path, hearth::LoadOptions options, quint64 serial);
    Q_INVOKABLE void submit(const hearth::ReplyRequest& request);
    Q_INVOKABLE void stop(quint64 ticket);
    Q_INVOKABLE void openKvStore(const hearth::KvStoreOptions& options);
    void submitSink(SinkReply reply);
    void cancelRequest(int64_t requestId);  // a sink reply's (Turn::id); ignored once it finished
    // The engine's KV blocks and sequences; none while no model is loaded. Engine thread.
    std::optional<EngineMetrics> metrics() const;
    // The KV disk budget from now on; a lower one is enforced at once (least recently used
    // conversations lose their saved KV). No store open: nothing to do.
    Q_INVOKABLE void setKvDiskBudget(qint64 bytes);
    qint64 kvDiskBudgetBytes() const;  // engine thread; -1 when no store is open
    // Messages the history index holds and whether the store's are all in (engine thread).
    int64_t historyDocuments() const;
    bool historyFed() const { return historyFeed_.next >= historyFeed_.conversations.size(); }

signals:
    void loadProgress(int percent);
    void modelLoaded(const hearth::LoadedModel& model);
    // message: the technical line (English, the CLI's); summary: the plain words (userSummary()).
    void loadFailed(const QString& message, const QString& summary);
    void loadCancelled();
    void replyStarted(const hearth::ReplyStarted& info);
    void textReady(quint64 ticket, const QString& text);  // a batch of reply text
    // With each batch: tokens generated so far and their rate since the first one (0: not yet known).
    void replyProgress(quint64 ticket, int generatedTokens, double tokensPerSecond);
    void replyFinished(const hearth::ReplyStats& stats);
    void replyFailed(quint64 ticket, const QString& message);

private:
    struct Active {
        quint64 ticket = 0;
        Turn turn;
        QString pending = {};  // text not yet sent to the GUI
        QElapsedTimer sinceFirstToken = {};  // started at the first generated token (live tokens/s)
        bool speculating = false;  // request.spec was on
        std::shared_ptr<const SinkReply> sink = nullptr;  // a sink reply: events go there, not to the signals
        std::string userText = {};  // the user's message it answers (the history index's)
    };
    // engine_host_history.cpp: the engine's history index (SpecDrafter::History) fed with the
    // store's messages of every conversation after a load, in slices between steps, and with
    // each reply and the message it answers as they finish.
    struct HistoryFeed {
        std::vector<int64_t> conversations;  // oldest first
        size_t next = 0;
        int64_t cutoffMs = 0;  // messages written later reach the index as replies finish
        quint64 generation = 0;  // a new model or store starts a new feed
    };
    void startHistoryFeed();
    void feedHistorySlice(quint64 generation);
    void addToHistory(const Active& a);
    // engine_host_kv.cpp: the store connection, the save after a reply finishes, its statistics.
    void saveKv(const Active& a);
    ReplyStats finishedStats(const Active& a);
    bool pageIn(const QString& path, quint64 serial);
    void failAll(const QString& message);
    void scheduleStep();
    void runStep();
    void flush();

    std::unique_ptr<ConversationStore> store_;  // declared before engine_, so it closes after it
    PrefillRate prefillRate_;
    std::unique_ptr<Engine> engine_;
    LoadedModel model_;
    std::map<int64_t, Active> active_;  // engine request id -> reply
    const std::atomic<quint64>& cancelledLoad_;
    QElapsedTimer sinceFlush_;
    bool stepQueued_ = false;
    HistoryFeed historyFeed_;
};

// Owned by the GUI thread: starts the thread, forwards requests, stops and joins on exit. As a
// ReplyEngine it re-emits the worker's reply signals on the GUI thread.
class EngineHost : public ReplyEngine {
    Q_OBJECT
public:
    explicit EngineHost(QObject* parent = nullptr);
    ~EngineHost() override;

    EngineWorker* worker() const { return worker_; }
    void loadModel(const QString& path, const LoadOptions& options = {});
    // KV persistence from now on (the engine thread opens its own connection to path).
    void useKvStore(const KvStoreOptions& options);
    void setKvDiskBudget(qint64 bytes);  // the engine thread's store connection, at once
    void cancelLoad() { cancelledLoad_ = loadSerial_; }
    // Returns the ticket of the reply (the same as request.ticket when that is non-zero).
    quint64 generate(ReplyRequest request) override;
    void stop(quint64 ticket) override;
    // Sink replies (EngineWorker::submitSink), from any thread.
    void submit(SinkReply reply);
    void cancelRequest(int64_t requestId);

private:
    QThread thread_;
    EngineWorker* worker_;
    quint64 loadSerial_ = 0;
    quint64 nextTicket_ = 1;
    std::atomic<quint64> cancelledLoad_{0};
};

}  // namespace hearth

Q_DECLARE_METATYPE(hearth::LoadOptions)
Q_DECLARE_METATYPE(hearth::KvStoreOptions)
Q_DECLARE_METATYPE(hearth::LoadedModel)
