// runStoredTurn: the user message, the restore, the streamed and saved reply, the KV save.
#include "app/store/stored_turn.h"

#include <chrono>

#include "engine/model/gguf.h"
#include "engine/str_cat.h"

namespace hearth {
namespace {

using Clock = std::chrono::steady_clock;

// Saves a streamed reply at most once a second (and always when told it is final).
class ReplySaver {
public:
    ReplySaver(ConversationStore& store, int64_t messageId) : store_(store), id_(messageId), last_(Clock::now()) {}
    Result<void> progress(const std::string& text) {
        if (Clock::now() - last_ < std::chrono::seconds(1)) return {};
        last_ = Clock::now();
        return store_.updateMessage(id_, text, false);
    }

private:
    ConversationStore& store_;
    int64_t id_;
    Clock::time_point last_;
};

GenerationStats statsOf(const StoredTurnResult& r) {
    GenerationStats s;
    s.promptTokens = static_cast<int32_t>(r.request.prompt.size());
    s.generatedTokens = static_cast<int32_t>(r.tokens.size());
    s.prefixCacheHitTokens = r.timings.prefixCacheHitTokens;
    s.kvRestoredTokens = r.kvRestoredTokens;
    s.ttftMs = r.timings.ttftMs;
    s.prefillTokensPerSecond = r.timings.prefillTokensPerSecond();
    s.decodeTokensPerSecond = r.timings.decodeTokensPerSecond();
    s.finishReason = finishReasonName(r.reason);
    return s;
}

// Steps the engine until the request finishes, saving the reply as it grows.
Result<void> generateInto(Engine& engine, RequestId id, ReplySaver& saver, StoredTurnResult& r,
                          const std::function<bool(std::string_view)>& onText) {
    while (true) {
        for (EngineEvent& e : engine.step()) {
            if (e.request != id) continue;
            r.text += e.text;
            if (onText && !e.text.empty() && !onText(e.text)) engine.cancel(id);
            if (e.kind == EngineEvent::Kind::Token) {
                r.tokens.push_back(e.token);
                if (auto s = saver.progress(r.text); !s) return s;
                continue;
            }
            if (e.error) return std::unexpected(*e.error);
            r.reason = e.reason;
            r.timings = e.timings;
            return {};
        }
        if (engine.idle()) return fail(ErrorCode::InvalidArgument, "the request ended without a finish event");
    }
}

}  // namespace

std::vector<ChatMessage> chatMessages(const Conversation& c, const std::vector<Message>& branch) {
    std::vector<ChatMessage> out;
    if (!c.systemPrompt.empty()) out.push_back({"system", c.systemPrompt});
    for (const Message& m : branch) out.push_back({messageRoleName(m.role), m.text});
    return out;
}

Result<Conversation> findConversation(ConversationStore& store, const std::string& name, bool create,
                                      const std::string& systemPrompt) {
    auto byHandle = store.conversationByHandle(name);
    if (!byHandle) return std::unexpected(byHandle.error());
    if (*byHandle) return **byHandle;
    const bool numeric = !name.empty() && name.size() < 19 && name.find_first_not_of("0123456789") == std::string::npos;
    if (numeric) {
        auto byId = store.conversation(std::stoll(name));
        if (!byId) return std::unexpected(byId.error());
        if (*byId) return **byId;
    }
    if (!create) return fail(ErrorCode::InvalidArgument, strCat("no conversation '", name, "' in ", store.path()));
    return store.createConversation(name, systemPrompt, name);
}

Result<StoredTurnResult> runStoredTurn(Engine& engine, ConversationStore& store, int64_t conversationId,
                                       const std::string& userText, GenerateRequest request, bool kvRestore,
                                       const std::function<bool(std::string_view)>& onText) {
    auto conv = store.conversation(conversationId);
    if (!conv) return std::unexpected(conv.error());
    if (!*conv) return fail(ErrorCode::InvalidArgument, strCat("no conversation ", conversationId));
    auto user = store.appendMessage(conversationId, (*conv)->activeLeafId, MessageRole::User, userText);
    if (!user) return std::unexpected(user.error());
    auto branch = store.activeBranch(conversationId);
    if (!branch) return std::unexpected(branch.error());
    StoredTurnResult r;
    r.userMessageId = user->id;
    request.prompt = engine.chatPrompt(chatMessages(**conv, *branch));
    r.request = request;
    if (kvRestore) {
        auto restored = restoreKv(engine, store.kv(), conversationId, request.prompt);
        if (!restored) return std::unexpected(restored.error());
        r.restore = *restored;
    }
    auto reply = store.appendMessage(conversationId, user->id, MessageRole::Assistant, "", false);
    if (!reply) return std::unexpected(reply.error());
    r.replyMessageId = reply->id;
    if (auto m = store.setModel(conversationId, engine.file().path()); !m) return std::unexpected(m.error());
    auto id = engine.submit(request);
    if (!id) return std::unexpected(id.error());
    ReplySaver saver(store, reply->id);
    if (auto g = generateInto(engine, *id, saver, r, onText); !g) return std::unexpected(g.error());
    r.kvRestoredTokens = std::min(r.restore.restoredTokens, r.timings.prefixCacheHitTokens);
    r.timings.prefixCacheHitTokens -= r.kvRestoredTokens;
    const GenerationStats stats = statsOf(r);
    if (auto u = store.updateMessage(reply->id, r.text, true, &stats); !u) return std::unexpected(u.error());
    std::vector<TokenId> computed = request.prompt;
    if (!r.tokens.empty()) computed.insert(computed.end(), r.tokens.begin(), r.tokens.end() - 1);
    auto saved = saveKv(engine, store.kv(), conversationId, computed);
    if (!saved) return std::unexpected(saved.error());
    r.kvBlocksSaved = *saved;
    return r;
}

}  // namespace hearth
