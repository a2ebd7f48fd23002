// One turn of a stored conversation: the user message committed, the prompt rendered from the
// active branch, KV restored, the reply streamed and saved at least once a second and at the
// end, the KV saved. What hearth-cli generate --db and chat --db run.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "app/store/conversation_store.h"
#include "app/store/stored_kv.h"
#include "engine/engine.h"

namespace hearth {

struct StoredTurnResult {
    GenerateRequest request;          // with the prompt that ran
    std::vector<TokenId> tokens;      // generated
    std::string text;
    FinishReason reason = FinishReason::Length;
    GenerateTimings timings;          // prefixCacheHitTokens excludes kvRestoredTokens
    int32_t kvRestoredTokens = 0;     // prompt tokens whose K/V came from the store
    KvRestoreReport restore;
    int32_t kvBlocksSaved = 0;
    int64_t userMessageId = 0, replyMessageId = 0;
};

// The chat messages of a branch, the conversation's system prompt first when it has one.
std::vector<ChatMessage> chatMessages(const Conversation& c, const std::vector<Message>& branch);

// The conversation named by `name`: its handle, else its numeric id; created (handle = name)
// when absent and create is true.
Result<Conversation> findConversation(ConversationStore& store, const std::string& name, bool create,
                                      const std::string& systemPrompt = {});

// request: sampling and limits (its prompt is replaced). onText sees the reply's text as it
// comes; return false to stop. Errors: the store's and the engine's.
Result<StoredTurnResult> runStoredTurn(Engine& engine, ConversationStore& store, int64_t conversationId,
                                       const std::string& userText, GenerateRequest request, bool kvRestore,
                                       const std::function<bool(std::string_view)>& onText = {});

}  // namespace hearth
