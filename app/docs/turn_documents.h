// The documents one user turn carries, chosen when the message is sent and recorded with it:
// attached documents small enough go in whole (once per branch), and the rest is searched
// (BM25 over the FTS5 trigram index) for the passages that best match the message, all within
// kTurnDocumentBudgetTokens. They go into this turn's user message only - never the system
// prompt or an earlier turn - so the prompt's stored prefix, and its saved KV, stay valid.
#pragma once

#include <string>
#include <vector>

#include "app/docs/passages.h"
#include "app/store/conversation_store.h"

namespace hearth {

struct TurnDocuments {
    std::vector<TurnSource> sources;  // whole documents first (oldest first), then passages, best first
    int tokens = 0;  // estimated, of all sources
    int budget = kTurnDocumentBudgetTokens;
    double searchMs = 0;  // the time the passage search took
};

// earlier: the branch before this turn (what its turns carried is not repeated).
// Errors: the store's.
Result<TurnDocuments> chooseTurnDocuments(const ConversationStore& store, int64_t conversationId,
                                          const std::vector<Message>& earlier, const std::string& question,
                                          int budget = kTurnDocumentBudgetTokens);

// Chooses the documents of a just-appended user message and records them with it (nothing is
// recorded when there are none). budget: turnDocumentBudget() of the model's context. Errors: the store's.
Result<TurnDocuments> recordTurnDocuments(ConversationStore& store, const Message& userMessage,
                                          int budget = kTurnDocumentBudgetTokens);

}  // namespace hearth
