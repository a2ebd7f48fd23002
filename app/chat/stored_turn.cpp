// runStoredTurn: the user message, then the turn pipeline driven to its end on this thread.
#include "app/chat/stored_turn.h"

#include "app/docs/turn_documents.h"
#include "engine/model/gguf.h"
#include "engine/str_cat.h"

namespace hearth {
namespace {

// Ends a submitted request the turn can no longer record, so that the engine is idle again.
void abandon(Engine& engine, RequestId id) {
    engine.cancel(id);
    while (!engine.idle()) (void)engine.step();
}

// Steps the engine until the turn finishes, recording the reply as it grows.
Result<void> runToEnd(Engine& engine, Turn& turn, ReplyRecorder& recorder,
                      const std::function<bool(std::string_view)>& onText) {
    while (true) {
        for (EngineEvent& e : engine.step()) {
            if (e.request != turn.id) continue;
            const bool finished = turn.take(e);
            if (onText && !e.text.empty() && !onText(e.text)) engine.cancel(turn.id);
            if (auto s = recorder.append(e.text); !s) return s;
            if (finished) return turn.error ? Result<void>(std::unexpected(*turn.error)) : Result<void>{};
        }
        if (engine.idle()) return fail(ErrorCode::InvalidArgument, "the request ended without a finish event");
    }
}

}  // namespace

std::vector<ChatMessage> chatMessages(const Conversation& c, const std::vector<Message>& branch) {
    std::vector<ChatMessage> out;
    if (!c.systemPrompt.empty()) out.push_back({ChatRole::System, c.systemPrompt});
    for (const Message& m : branch)  // a user turn carries the documents recorded with it
        out.push_back({m.role, m.role == ChatRole::User ? userTurnText(m.text, m.documentsJson) : m.text});
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

// Runs the turn of input and records its reply in the message replyRow() gives once the request
// is submitted (holding replyText already): the shared end of runStoredTurn and
// continueStoredReply. A turn that cannot start leaves no reply row.
Result<StoredTurnResult> runRecorded(Engine& engine, ConversationStore& store, TurnInput input,
                                     const std::function<Result<int64_t>()>& replyRow, std::string replyText,
                                     const std::function<bool(std::string_view)>& onText) {
    const int64_t conversationId = input.conversationId;
    GenerateRequest request = input.request;
    auto turn = startTurn(engine, &store.kv(), std::move(input));
    if (!turn) return std::unexpected(turn.error());
    StoredTurnResult r;
    static_cast<Turn&>(r) = std::move(*turn);
    r.request = std::move(request);
    r.request.prompt = r.prompt;
    auto replyId = replyRow();
    auto model = replyId ? store.setModel(conversationId, engine.file().path()) : Result<void>{};
    if (!replyId || !model) {
        abandon(engine, r.id);
        return std::unexpected(replyId ? model.error() : replyId.error());
    }
    r.replyMessageId = *replyId;
    ReplyRecorder recorder(store, *replyId, std::move(replyText));
    if (auto g = runToEnd(engine, r, recorder, onText); !g) return std::unexpected(g.error());
    if (auto u = recorder.finish(r.stats()); !u) return std::unexpected(u.error());
    auto saved = saveTurnKv(engine, &store.kv(), r);
    if (!saved) return std::unexpected(saved.error());
    r.kvBlocksSaved = *saved;
    return r;
}

Result<StoredTurnResult> runStoredTurn(Engine& engine, ConversationStore& store, int64_t conversationId,
                                       const std::string& userText, GenerateRequest request,
                                       const StoredTurnOptions& options,
                                       const std::function<bool(std::string_view)>& onText) {
    auto conv = store.conversation(conversationId);
    if (!conv) return std::unexpected(conv.error());
    if (!*conv) return fail(ErrorCode::InvalidArgument, strCat("no conversation ", conversationId));
    auto user = store.appendMessage(conversationId, (*conv)->activeLeafId, ChatRole::User, userText);
    if (!user) return std::unexpected(user.error());
    if (auto d = recordTurnDocuments(store, *user, turnDocumentBudget(engine.contextLength())); !d)
        return std::unexpected(d.error());
    auto branch = store.activeBranch(conversationId);
    if (!branch) return std::unexpected(branch.error());
    const auto replyRow = [&]() -> Result<int64_t> {
        auto reply = store.appendMessage(conversationId, user->id, ChatRole::Assistant, "", false);
        if (!reply) return std::unexpected(reply.error());
        if (!options.modelName.empty())
            if (auto m = store.setMessageModel(reply->id, options.modelName); !m) return std::unexpected(m.error());
        return reply->id;
    };
    auto r = runRecorded(engine, store,
                         TurnInput{.messages = chatMessages(**conv, *branch),
                                   .request = std::move(request),
                                   .conversationId = conversationId,
                                   .restoreKv = options.kvRestore,
                                   .enableThinking = options.enableThinking},
                         replyRow, {}, onText);
    if (r) r->userMessageId = user->id;
    return r;
}

Result<StoredTurnResult> continueStoredReply(Engine& engine, ConversationStore& store, int64_t conversationId,
                                             GenerateRequest request, const StoredTurnOptions& options,
                                             const std::function<bool(std::string_view)>& onText) {
    auto conv = store.conversation(conversationId);
    if (!conv) return std::unexpected(conv.error());
    if (!*conv) return fail(ErrorCode::InvalidArgument, strCat("no conversation ", conversationId));
    auto branch = store.activeBranch(conversationId);
    if (!branch) return std::unexpected(branch.error());
    if (branch->empty() || branch->back().role != ChatRole::Assistant)
        return fail(ErrorCode::InvalidArgument, "there is no reply to continue");
    const Message last = branch->back();
    branch->pop_back();
    const auto replyRow = [&]() -> Result<int64_t> {
        if (auto u = store.updateMessage(last.id, last.text, false); !u) return std::unexpected(u.error());
        return last.id;
    };
    auto r = runRecorded(engine, store,
                         TurnInput{.messages = chatMessages(**conv, *branch),
                                   .request = std::move(request),
                                   .conversationId = conversationId,
                                   .restoreKv = options.kvRestore,
                                   .enableThinking = options.enableThinking,
                                   .replyPrefix = last.text},
                         replyRow, last.text, onText);
    if (r) r->userMessageId = last.parentId;
    return r;
}

}  // namespace hearth
