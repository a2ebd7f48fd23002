// The engine worker's KV persistence: its own store connection (opened on the engine thread)
// for the turn pipeline's restore and save, and a finished reply's statistics for the GUI.

#include "app/engine_host/engine_host.h"
#include "app/common/error_text.h"
#include "app/store/conversation_store.h"
#include "app/store/kv_block_store.h"
#include "engine/engine.h"

namespace hearth {

void EngineWorker::openKvStore(const KvStoreOptions& options) {
    store_.reset();
    if (options.path.isEmpty()) return;
    auto store = ConversationStore::open(options.path.toStdString(), options.diskBudgetBytes);
    if (!store) {
        qWarning("hearth: KV persistence is off: %s", store.error().message.c_str());
        return;
    }
    store_ = std::move(*store);
    startHistoryFeed();
}

void EngineWorker::setKvDiskBudget(qint64 bytes) {
    if (!store_) return;
    store_->kv().setDiskBudgetBytes(bytes);
    if (auto r = store_->kv().enforceBudget(); !r)
        qWarning("hearth: the KV disk budget could not be enforced: %s", r.error().message.c_str());
}

qint64 EngineWorker::kvDiskBudgetBytes() const { return store_ ? store_->kv().diskBudgetBytes() : -1; }

// After the GUI has the reply: a failure is logged, since the reply is already shown and stored.
void EngineWorker::saveKv(const Active& a) {
    if (!engine_) return;
    auto saved = saveTurnKv(*engine_, store_ ? &store_->kv() : nullptr, a.turn);
    if (!saved)
        qWarning("hearth: conversation %lld: the KV cache was not saved: %s",
                 static_cast<long long>(a.turn.conversationId), saved.error().message.c_str());
}

ReplyStats EngineWorker::finishedStats(const Active& a) {
    const Turn& t = a.turn;
    ReplyStats s;
    s.ticket = a.ticket;
    s.finishReason = QString::fromLatin1(finishReasonName(t.reason));
    s.promptTokens = static_cast<int>(t.prompt.size());
    s.generatedTokens = static_cast<int>(t.tokens.size());
    s.reusedTokens = t.timings.prefixCacheHitTokens;
    s.contextLength = engine_->contextLength();
    s.tokensPerSecond = t.timings.decodeTokensPerSecond();
    s.ttftMs = t.timings.ttftMs;
    s.kvRestoredTokens = t.kvRestoredTokens;
    s.kvSavedSeconds = prefillRate_.savedSeconds(t);
    s.kvNote = QString::fromStdString(t.kvNote);
    s.kvRefusal = t.restore.refusalKind;
    if (a.speculating) s.specDrafted = t.spec.drafted, s.specAccepted = t.spec.accepted;
    s.stored = t.stats();
    return s;
}

}  // namespace hearth
