// One turn of a stored conversation, run to its end on the calling thread: the user message
// committed, the prompt rendered from the active branch, then the turn pipeline (trim, restore,
// submit, stream, record the reply at least once a second, save the KV). What hearth-cli
// generate --db and chat --db run.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "app/chat/turn_pipeline.h"
#include "app/store/conversation_store.h"

namespace hearth {

// The finished turn (its prompt, reply, timings and restore), and where it was stored.
struct StoredTurnResult : Turn {
    GenerateRequest request;  // with the prompt that ran
    int32_t kvBlocksSaved = 0;
    int64_t userMessageId = 0, replyMessageId = 0;
};

// The chat messages of a branch, the conversation's system prompt first when it has one.
std::vector<ChatMessage> chatMessages(const Conversation& c, const std::vector<Message>& branch);

// The conversation named by `name`: its handle, else its numeric id; created (handle = name)
// when absent and create is true.
Result<Conversation> findConversation(ConversationStore& store, const std::string& name, bool create,
                                      const std::string& systemPrompt = {});

struct StoredTurnOptions {
    bool kvRestore = true;  // false: the prompt is computed in full
    bool enableThinking = true;  // TurnInput::enableThinking
    std::string modelName = {};  // recorded with the reply (Message::model); "" records none
};

// request: sampling and limits (its prompt is replaced). onText sees the reply's text as it
// comes; return false to stop.
// Errors: the store's, the engine's, and a last message that does not fit the context.
Result<StoredTurnResult> runStoredTurn(Engine& engine, ConversationStore& store, int64_t conversationId,
                                       const std::string& userText, GenerateRequest request,
                                       const StoredTurnOptions& options,
                                       const std::function<bool(std::string_view)>& onText = {});

// Continues the conversation's last reply (the active branch's leaf, an assistant message):
// the prompt is the branch before it plus its text, and what the model writes next is appended
// to that message (hearth-cli chat's /more after a reply hit the token limit). The message's
// statistics become the continuation's. Errors: those of runStoredTurn, and InvalidArgument
// when the branch does not end with a reply.
Result<StoredTurnResult> continueStoredReply(Engine& engine, ConversationStore& store, int64_t conversationId,
                                             GenerateRequest request, const StoredTurnOptions& options,
                                             const std::function<bool(std::string_view)>& onText = {});

}  // namespace hearth
