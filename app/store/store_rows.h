// Internal to app/store: reading Conversation and Message rows, and the statistics' JSON text.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/store/conversation_store.h"

namespace hearth {

class SqliteDb;

int64_t storeNowMs();  // Unix time in milliseconds

inline constexpr const char* kConversationSelect =
    "SELECT id, coalesce(handle, ''), title, model, system_prompt, settings_json, created_ms, updated_ms,"
    " coalesce(active_leaf_id, 0) FROM conversations";
inline constexpr const char* kMessageSelect =
    "SELECT id, conversation_id, coalesce(parent_id, 0), role, text, complete, created_ms, stats_json,"
    " coalesce((SELECT sources_json FROM turn_documents WHERE message_id = messages.id), ''), model FROM messages";

// Runs sql (with ?1 bound to text when given) and reads every row.
Result<std::vector<Conversation>> readConversations(SqliteDb& db, const std::string& sql,
                                                    std::optional<std::string> text);
// Runs sql with ?1 bound to id and reads every row.
Result<std::vector<Message>> readMessages(SqliteDb& db, const std::string& sql, int64_t id);

std::string statsToJson(const GenerationStats& stats);
GenerationStats statsFromJson(const std::string& json);

}  // namespace hearth
