// Conversations out and in. Hearth's JSON holds a conversation whole - every branch (each
// message with its parent), the active branch's leaf, the system prompt, the per-chat settings,
// the model, times and each reply's statistics - so that importing it gives back the same
// conversation message for message (KV is not exported: an imported conversation computes its
// KV on first use). Markdown is for reading: the active branch. Thread: the store's.
//
// Format "hearth.conversation", version 1:
//   {"format": "hearth.conversation", "version": 1, "title", "handle", "model", "system_prompt",
//    "settings": {...}, "created_ms", "updated_ms", "active_leaf": <id>,
//    "messages": [{"id", "parent" (0: a first message), "role": "system"|"user"|"assistant",
//                  "text", "complete", "created_ms", "stats": {...} (replies),
//                  "documents": [{"name", "passage" (0: whole), "text", "tokens"}, ...] (a user
//                  message that carried documents: what went into its turn)}, ...],
//    "attachments": [{"name", "kind", "created_ms", "text"}, ...] (the documents attached)}
// ids are the exporting database's; a parent comes before its children. Several conversations:
//   {"format": "hearth.conversations", "version": 1, "conversations": [ <one each> ]}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/store/conversation_store.h"

namespace hearth {

// Errors: the store's; InvalidArgument for an unknown id.
Result<std::string> exportConversationJson(const ConversationStore& store, int64_t conversationId);
Result<std::string> exportAllConversationsJson(const ConversationStore& store);  // newest first
Result<std::string> exportConversationMarkdown(const ConversationStore& store, int64_t conversationId);

// Imports one conversation ("hearth.conversation") or several ("hearth.conversations"), or
// another app's export - ChatGPT's conversations.json (its branches kept), Claude's
// (foreign_conversations.h) - as new conversations and returns their ids. The whole text is checked before anything is written (a
// malformed file adds nothing: InvalidFormat naming what is wrong); a handle already in use is
// dropped (the conversation is still imported). When the store fails part way, the conversations
// already written are deleted again. Errors: InvalidFormat, the store's.
Result<std::vector<int64_t>> importConversationsJson(ConversationStore& store, const std::string& json);

}  // namespace hearth
