// The engine worker's KV persistence: its own store connection (opened on the engine thread),
// the restore of a conversation's longest stored prefix before a reply, the save after it, and
// the reply's statistics with what the restore saved.

#include "app/engine_host/engine_host.h"
#include "app/common/error_text.h"
#include "app/store/conversation_store.h"
#include "app/store/kv_block_store.h"
#include "app/store/stored_kv.h"
#include "engine/engine.h"

namespace hearth {

namespace {

constexpr int kMinRatedPrefill = 64;  // prompt tokens computed before a reply's prefill rate is trusted
}  // namespace

void EngineWorker::openKvStore(const KvStoreOptions& options) {
    store_.reset();
    if (options.path.isEmpty()) return;
    auto store = ConversationStore::open(options.path.toStdString(), options.diskBudgetBytes);
    if (!store) {
        qWarning("hearth: KV persistence is off: %s", store.error().message.c_str());
        return;
    }
    store_ = std::move(*store);
}

void EngineWorker::setKvDiskBudget(qint64 bytes) {
    if (!store_) return;
    store_->kv().setDiskBudgetBytes(bytes);
    if (auto r = store_->kv().enforceBudget(); !r)
        qWarning("hearth: the KV disk budget could not be enforced: %s", r.error().message.c_str());
}

qint64 EngineWorker::kvDiskBudgetBytes() const { return store_ ? store_->kv().diskBudgetBytes() : -1; }

// Precondition: a's prompt tokens are set. Leaves a.kvRestored 0 and says why in a.kvNote
// when nothing came from the store; a failure to read is a note, never a failed reply.
void EngineWorker::restoreKv(Active& a) {
    if (!store_ || a.conversationId == 0) return;
    if (!engine_->idle()) {
        a.kvNote = tr("another reply is running");
        return;
    }
    auto r = hearth::restoreKv(*engine_, store_->kv(), a.conversationId, a.tokens);
    if (!r) {
        a.kvNote = describe(r.error());
        return;
    }
    a.kvRestored = r->restoredTokens;
    a.kvRestoreMs = r->ms;
    a.kvNote = QString::fromStdString(r->refusal);
    if (!r->refusal.empty()) qWarning("hearth: conversation %lld: %s; recomputed", static_cast<long long>(a.conversationId),
                                      r->refusal.c_str());
}

// Saves the K/V of the tokens computed (the prompt and every generated token but the last),
// within the store's disk budget. A failure is logged: the reply is already shown and stored.
void EngineWorker::saveKv(const Active& a) {
    if (!store_ || a.conversationId == 0 || a.tokens.empty()) return;
    std::vector<int32_t> computed = a.tokens;
    if (a.generated > 0) computed.pop_back();
    auto saved = hearth::saveKv(*engine_, store_->kv(), a.conversationId, computed);
    if (!saved)
        qWarning("hearth: conversation %lld: the KV cache was not saved: %s", static_cast<long long>(a.conversationId),
                 saved.error().message.c_str());
}

ReplyStats EngineWorker::finishedStats(const Active& a, const EngineEvent& ev) {
    const GenerateTimings& t = ev.timings;
    ReplyStats s{a.ticket, QString::fromLatin1(finishReasonName(ev.reason)), a.promptTokens, a.generated,
                 t.prefixCacheHitTokens, engine_->contextLength(), t.decodeTokensPerSecond(), t.ttftMs};
    // Restored tokens are part of the engine's prefix hit (they were cached when it was admitted).
    s.kvRestoredTokens = std::min(a.kvRestored, t.prefixCacheHitTokens);
    s.reusedTokens -= s.kvRestoredTokens;
    s.kvNote = a.kvNote;
    if (t.prefillTokens >= kMinRatedPrefill && t.prefillTokensPerSecond() > 0) prefillRate_ = t.prefillTokensPerSecond();
    const double rate = prefillRate_ > 0 ? prefillRate_ : t.prefillTokensPerSecond();
    if (s.kvRestoredTokens > 0 && rate > 0)
        s.kvSavedSeconds = std::max(0.0, s.kvRestoredTokens / rate - a.kvRestoreMs / 1000.0);
    if (a.speculating) s.specDrafted = ev.spec.drafted, s.specAccepted = ev.spec.accepted;
    return s;
}

}  // namespace hearth
