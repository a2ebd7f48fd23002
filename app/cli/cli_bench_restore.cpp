// hearth-cli bench-restore --model PATH --tokens N: an N-token conversation saved, then the next
// reply's time to first token in a new engine (model warm) with KV restored from the database
// and with re-prefill, on the same threads and kernels.
#include <QJsonDocument>
#include <QTemporaryDir>
#include <cstdio>
#include <cstdlib>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_store.h"
#include "app/store/kv_block_store.h"
#include "app/store/stored_kv.h"
#include "app/chat/stored_turn.h"
#include "engine/str_cat.h"
#include "kernels/cpu/cpu_features.h"

namespace hearth::cli {
namespace {

QList<QCommandLineOption> benchRestoreOptions() {
    QList<QCommandLineOption> o = storeOptions();
    o << QCommandLineOption("tokens", "Length of the conversation in tokens.", "n", "2000");
    return o;
}

// Alternating user and assistant messages of plain prose until the rendered chat has at
// least n tokens.
std::vector<ChatMessage> buildConversation(const Engine& e, int32_t n) {
    static const char* kSentences[] = {
        "The river ran past the old mill where the children used to play on summer evenings.",
        "Can you tell me more about how the town changed after the railway arrived?",
        "Trade grew quickly, new houses were built along the valley, and the market doubled in size.",
        "What happened to the families who had worked the mill for generations?",
        "Many of them found work at the station or opened shops that served the travellers.",
        "That sounds like a hopeful story; were there any difficulties along the way?",
    };
    std::vector<ChatMessage> messages;
    for (int i = 0; std::ssize(e.chatPrompt(messages)) < n; ++i) {
        std::string text;
        for (int k = 0; k < 3; ++k) text += strCat(kSentences[(i * 3 + k) % 6], " ");
        messages.push_back({i % 2 == 0 ? ChatRole::User : ChatRole::Assistant, strCat("(", i, ") ", text)});
    }
    return messages;
}

struct FirstToken {
    double ttftMs = 0;
    TokenId token = -1;
    int32_t restoredTokens = 0;
    double restoreMs = 0;  // reading the blocks from the database and importing them
    double readMs = 0, importMs = 0;  // ... of which reading, and importing
    std::string refusal;
};

// From the request (and the restore, when asked) to the first generated token.
Result<FirstToken> timeFirstToken(Engine& e, ConversationStore* store, int64_t conversationId,
                                  const GenerateRequest& req) {
    FirstToken out;
    const auto t0 = Clock::now();
    if (store) {
        auto r = restoreKv(e, store->kv(), conversationId, req.prompt);
        if (!r) return std::unexpected(r.error());
        out.restoredTokens = r->restoredTokens;
        out.refusal = r->refusal;
        out.restoreMs = r->ms;
        out.readMs = r->readMs;
        out.importMs = r->importMs;
    }
    auto id = e.submit(req);
    if (!id) return std::unexpected(id.error());
    while (out.token < 0) {
        for (const EngineEvent& ev : e.step()) {
            if (ev.error) return std::unexpected(*ev.error);
            if (ev.kind == EngineEvent::Kind::Token && out.token < 0) {
                out.ttftMs = msSince(t0);
                out.token = ev.token;
            }
        }
        if (e.idle() && out.token < 0) return fail(ErrorCode::InvalidArgument, "no token was generated");
    }
    while (!e.idle()) e.step();
    return out;
}

struct SavedHistory {
    int64_t conversationId = 0;
    int32_t storedTokens = 0;  // the tokens whose K/V were saved (full blocks and the partial last one)
    double saveMs = 0;
};

// As a chat does it: the history (ending with a user message) as stored messages, a reply of up
// to 32 tokens generated in `e` and stored, the K/V of what was computed (the prompt and the
// reply but its last token) saved. history gets the reply.
Result<SavedHistory> saveHistory(ConversationStore& s, Engine& e, std::vector<ChatMessage>& history) {
    auto conv = s.createConversation("bench-restore");
    if (!conv) return std::unexpected(conv.error());
    int64_t parent = 0;
    for (const ChatMessage& m : history) {
        auto msg = s.appendMessage(conv->id, parent, m.role, m.content);
        if (!msg) return std::unexpected(msg.error());
        parent = msg->id;
    }
    GenerateRequest req;
    req.maxTokens = 32;
    req.sampling.temperature = 0;
    req.prompt = e.chatPrompt(history);
    std::string reply;
    auto r = e.generate(req, [&](TokenId, std::string_view text) { return reply += text, true; });
    if (!r) return std::unexpected(r.error());
    if (auto m = s.appendMessage(conv->id, parent, ChatRole::Assistant, reply); !m) return std::unexpected(m.error());
    history.push_back({ChatRole::Assistant, reply});
    std::vector<TokenId> computed = req.prompt;
    if (!r->tokens.empty()) computed.insert(computed.end(), r->tokens.begin(), r->tokens.end() - 1);
    const auto t0 = Clock::now();
    auto saved = saveKv(e, s.kv(), conv->id, computed);
    if (!saved) return std::unexpected(saved.error());
    return SavedHistory{conv->id, static_cast<int32_t>(computed.size()), msSince(t0)};
}

// The engine's CPU threads, as it chooses them: HEARTH_THREADS, else the physical cores.
int engineThreads() {
    const char* env = std::getenv("HEARTH_THREADS");
    return env && std::atoi(env) > 0 ? std::atoi(env) : physicalCoreCount();
}

// Where the restored reply's time to first token goes (ms): reading the blocks from SQLite,
// importing them, marking the conversation's blocks used, and computing the tokens that were not
// restored (the new turn) through the first token. Rendering and tokenizing the request is
// reported too, but happens before the TTFT's start (as in a chat, before restoreKv).
QJsonObject restoreBreakdown(const FirstToken& restored, int requestTokens, double renderMs) {
    return {{"read_ms", restored.readMs},
            {"import_ms", restored.importMs},
            {"mark_used_ms", restored.restoreMs - restored.readMs - restored.importMs},
            {"compute_ms", restored.ttftMs - restored.restoreMs},
            {"computed_tokens", requestTokens - restored.restoredTokens},
            {"render_tokenize_ms", renderMs}};
}

QJsonObject benchJson(const QCommandLineParser& p, ConversationStore& s, const Engine& e, int32_t historyTokens,
                      const GenerateRequest& req, const FirstToken& restored, const FirstToken& reprefill,
                      const SavedHistory& saved, double renderMs) {
    const int64_t dbBytes = s.kv().diskUsageBytes();
    const int64_t storedTokens = saved.storedTokens;
    QJsonObject o{{"model", p.value("model")},
                  {"backend", QString::fromStdString(e.backendName())},
                  {"threads", engineThreads()},
                  {"conversation_tokens", historyTokens},
                  {"request_tokens", static_cast<int>(req.prompt.size())},
                  {"kv_restored_tokens", restored.restoredTokens},
                  {"restore_ttft_ms", restored.ttftMs},
                  {"restore_read_import_ms", restored.restoreMs},
                  {"restore_breakdown", restoreBreakdown(restored, static_cast<int>(req.prompt.size()), renderMs)},
                  {"reprefill_ttft_ms", reprefill.ttftMs},
                  {"speedup", restored.ttftMs > 0 ? reprefill.ttftMs / restored.ttftMs : 0.0},
                  {"same_first_token", restored.token == reprefill.token},
                  {"save_ms", saved.saveMs},
                  {"stored_tokens", static_cast<qint64>(storedTokens)},
                  {"db_bytes", static_cast<qint64>(dbBytes)},
                  {"bytes_per_token", storedTokens > 0 ? double(dbBytes) / double(storedTokens) : 0.0}};
    if (!restored.refusal.empty()) o.insert("kv_restore_refused", QString::fromStdString(restored.refusal));
    return o;
}

int cmdBenchRestore(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("bench-restore needs --model");
    int32_t nTokens = 0;
    QString error;
    if (!number(p, "tokens", nTokens, error) || nTokens < 16)
        return usageError(error.isEmpty() ? "--tokens must be >= 16" : error);
    QTemporaryDir tmp;
    const std::string dbPath =
        p.isSet("db") ? p.value("db").toStdString() : (tmp.path() + "/bench.sqlite").toStdString();
    auto store = ConversationStore::open(dbPath);
    if (!store) return failWith(store.error());
    ConversationStore& s = **store;
    auto first = loadEngineWithStore(p, s);
    if (!first) return failWith(first.error());
    std::vector<ChatMessage> history = buildConversation(**first, nTokens);
    if (history.back().role == ChatRole::Assistant) history.pop_back();  // the engine writes the last reply
    auto conv = saveHistory(s, **first, history);
    if (!conv) return failWith(conv.error());
    const auto historyTokens = static_cast<int32_t>((*first)->chatPrompt(history).size());
    first->reset();  // the restart: new engines below, the model file in the page cache

    history.push_back({ChatRole::User, "Summarise our conversation in one sentence."});
    GenerateRequest req;
    req.maxTokens = 1;
    req.sampling.temperature = 0;
    auto restoreEngine = loadEngineWithStore(p, s);
    if (!restoreEngine) return failWith(restoreEngine.error());
    const auto renderStart = Clock::now();
    req.prompt = (*restoreEngine)->chatPrompt(history);
    const double renderMs = msSince(renderStart);
    auto restored = timeFirstToken(**restoreEngine, &s, conv->conversationId, req);
    if (!restored) return failWith(restored.error());
    restoreEngine->reset();
    auto prefillEngine = loadEngineWithStore(p, s);
    if (!prefillEngine) return failWith(prefillEngine.error());
    auto reprefill = timeFirstToken(**prefillEngine, nullptr, conv->conversationId, req);
    if (!reprefill) return failWith(reprefill.error());

    const QJsonObject o = benchJson(p, s, **prefillEngine, historyTokens, req, *restored, *reprefill, *conv, renderMs);
    if (p.isSet("json")) {
        writeOut(QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString() + "\n");
        return 0;
    }
    writeOut(strCat("conversation ", historyTokens, " tokens, request ", req.prompt.size(), " tokens, ",
                    restored->restoredTokens, " restored\nrestore TTFT ", restored->ttftMs, " ms (reading ",
                    restored->readMs, " ms, importing ", restored->importMs, " ms, computing ",
                    req.prompt.size() - static_cast<size_t>(restored->restoredTokens), " tokens ",
                    restored->ttftMs - restored->restoreMs, " ms); re-prefill TTFT ", reprefill->ttftMs,
                    " ms; speedup ", o["speedup"].toDouble(), "x; ", o["bytes_per_token"].toDouble(),
                    " bytes on disk per stored token\n"));
    return 0;
}

}  // namespace

Command benchRestoreCommand() {
    return {"bench-restore",
            "  bench-restore --model PATH [--tokens N] [--json]   time to first token after a restart:\n"
            "           KV restored from the database vs recomputed\n",
            benchRestoreOptions, cmdBenchRestore};
}

}  // namespace hearth::cli
