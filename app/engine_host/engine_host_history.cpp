// The engine's history index, fed from the worker's own store connection: after a model or a
// store is loaded, every conversation's messages (all branches, oldest conversation first, so
// the index's cap drops the oldest) are tokenized with the model's vocabulary in slices of
// about a frame between steps; each finished reply and the user's message it answers are added
// as the GUI saves them.
#include <QDateTime>
#include <QElapsedTimer>
#include <algorithm>

#include "app/engine_host/engine_host.h"
#include "app/store/conversation_store.h"
#include "engine/spec/suffix_index.h"

namespace hearth {

namespace {

constexpr qint64 kSliceMs = 16;

}  // namespace

void EngineWorker::startHistoryFeed() {
    historyFeed_ =
        HistoryFeed{.conversations = {}, .next = 0, .cutoffMs = 0, .generation = historyFeed_.generation + 1};
    if (!engine_ || !store_) return;
    engine_->clearHistory();
    auto list = store_->listConversations();  // most recently updated first
    if (!list) {
        qWarning("hearth: history drafting has no earlier conversations: %s", list.error().message.c_str());
        return;
    }
    for (auto it = list->rbegin(); it != list->rend(); ++it) historyFeed_.conversations.push_back(it->id);
    historyFeed_.cutoffMs = QDateTime::currentMSecsSinceEpoch();
    const quint64 generation = historyFeed_.generation;
    QMetaObject::invokeMethod(
        this, [this, generation] { feedHistorySlice(generation); }, Qt::QueuedConnection);
}

void EngineWorker::feedHistorySlice(quint64 generation) {
    if (generation != historyFeed_.generation || !engine_ || !store_) return;
    QElapsedTimer slice;
    slice.start();
    while (!historyFed() && slice.elapsed() < kSliceMs) {
        const int64_t id = historyFeed_.conversations[historyFeed_.next++];
        auto messages = store_->messages(id);
        if (!messages) continue;  // a conversation deleted meanwhile, or unreadable: skipped
        for (const Message& m : *messages) {
            if (!m.complete || m.createdMs > historyFeed_.cutoffMs || m.text.empty()) continue;
            if (m.role != ChatRole::User && m.role != ChatRole::Assistant) continue;
            engine_->addHistory(engine_->tokenizer().encode(m.text, false, false));
        }
    }
    if (!historyFed())
        QMetaObject::invokeMethod(
            this, [this, generation] { feedHistorySlice(generation); }, Qt::QueuedConnection);
}

void EngineWorker::addToHistory(const Active& a) {
    if (!engine_ || a.sink) return;  // the server's replies are not stored
    if (!a.userText.empty()) engine_->addHistory(engine_->tokenizer().encode(a.userText, false, false));
    engine_->addHistory(a.turn.tokens);
}

int64_t EngineWorker::historyDocuments() const { return engine_ ? engine_->history().nDocuments() : 0; }

}  // namespace hearth
