// Internal to app/store: conversations read from a file before they are written to the store
// (conversation_export.cpp), and the readers of other apps' exports. The formats, as documented
// publicly (TomzxCode/llm-conversations-viewer, docs/formats.md, which imports both):
// - ChatGPT's conversations.json: an array of conversations {"title", "create_time" (Unix
//   seconds), "mapping": {node id: {"id", "message": null | {"author": {"role"}, "create_time",
//   "content": {"content_type", "parts": [text, ...]}}, "parent": id | null, "children": [ids]}},
//   "current_node": the active branch's last node} - a tree, so edits and regenerations are
//   branches.
// - Claude's export: an array of conversations {"uuid", "name", "created_at" (ISO 8601),
//   "chat_messages": [{"uuid", "text", "sender": "human" | "assistant", "created_at"}]} - linear.
#pragma once

#include <QJsonArray>
#include <string>
#include <vector>

#include "app/store/conversation_store.h"

namespace hearth {

struct ImportedMessage {
    int64_t id = 0;  // the file's (> 0, unique within its conversation)
    int64_t parent = 0;  // 0: a first message; else an earlier message's id
    int64_t createdMs = 0;  // 0: unknown (the time of the import)
    ChatRole role = ChatRole::User;
    std::string text;
    bool complete = true;
    GenerationStats stats;
    std::string documentsJson = {};  // a user message's documents (Message::documentsJson)
};

// An attached document (attachment_store.h) as a file holds it: its whole text.
struct ImportedAttachment {
    std::string name, kind, text;
    int64_t createdMs = 0;
};

struct ImportedConversation {
    Conversation conversation;  // title, handle, model, system prompt, settings; activeLeafId: a file id
    std::vector<ImportedMessage> messages;  // parents before children
    std::vector<ImportedAttachment> attachments = {};  // oldest first
};

// Errors: InvalidFormat naming the conversation and what is wrong.
Result<std::vector<ImportedConversation>> readChatGptExport(const QJsonArray& conversations);
Result<std::vector<ImportedConversation>> readClaudeExport(const QJsonArray& conversations);

}  // namespace hearth
