// Rows of conversations and messages into values; generation statistics as JSON text.
#include "app/store/store_rows.h"

#include <QJsonDocument>
#include <QJsonObject>

#include "app/store/sqlite_db.h"
#include "engine/str_cat.h"

namespace hearth {

Result<std::vector<Conversation>> readConversations(SqliteDb& db, const std::string& sql,
                                                    std::optional<std::string> text) {
    auto st = db.prepare(sql);
    if (!st) return std::unexpected(st.error());
    if (text) st->bind(1, std::string_view(*text));
    std::vector<Conversation> out;
    while (true) {
        auto row = st->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) break;
        out.push_back(Conversation{.id = st->int64(0),
                                   .handle = st->text(1),
                                   .title = st->text(2),
                                   .model = st->text(3),
                                   .systemPrompt = st->text(4),
                                   .settingsJson = st->text(5),
                                   .createdMs = st->int64(6),
                                   .updatedMs = st->int64(7),
                                   .activeLeafId = st->int64(8)});
    }
    return out;
}

Result<std::vector<Message>> readMessages(SqliteDb& db, const std::string& sql, int64_t id) {
    auto st = db.prepare(sql);
    if (!st) return std::unexpected(st.error());
    st->bind(1, id);
    std::vector<Message> out;
    while (true) {
        auto row = st->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) break;
        // The schema's CHECK admits only the three names; a file written otherwise is refused, not guessed.
        auto role = parseChatRole(st->text(3));
        if (!role) return fail(ErrorCode::InvalidFormat, strCat("message ", st->int64(0), ": ", role.error().message));
        out.push_back(Message{.id = st->int64(0),
                              .conversationId = st->int64(1),
                              .parentId = st->int64(2),
                              .role = *role,
                              .text = st->text(4),
                              .complete = st->int64(5) != 0,
                              .createdMs = st->int64(6),
                              .stats = statsFromJson(st->text(7)),
                              .documentsJson = st->text(8),
                              .model = st->text(9)});
    }
    return out;
}

std::string statsToJson(const GenerationStats& s) {
    QJsonObject o{{"prompt_tokens", s.promptTokens},
                  {"generated_tokens", s.generatedTokens},
                  {"prefix_cache_hit_tokens", s.prefixCacheHitTokens},
                  {"kv_restored_tokens", s.kvRestoredTokens},
                  {"ttft_ms", s.ttftMs},
                  {"prefill_tokens_per_second", s.prefillTokensPerSecond},
                  {"decode_tokens_per_second", s.decodeTokensPerSecond},
                  {"finish_reason", QString::fromStdString(s.finishReason)}};
    return QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString();
}

GenerationStats statsFromJson(const std::string& json) {
    const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
    GenerationStats s;
    s.promptTokens = o["prompt_tokens"].toInt();
    s.generatedTokens = o["generated_tokens"].toInt();
    s.prefixCacheHitTokens = o["prefix_cache_hit_tokens"].toInt();
    s.kvRestoredTokens = o["kv_restored_tokens"].toInt();
    s.ttftMs = o["ttft_ms"].toDouble();
    s.prefillTokensPerSecond = o["prefill_tokens_per_second"].toDouble();
    s.decodeTokensPerSecond = o["decode_tokens_per_second"].toDouble();
    s.finishReason = o["finish_reason"].toString().toStdString();
    return s;
}

}  // namespace hearth
