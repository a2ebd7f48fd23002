// hearth-cli chat: a chat in the terminal. Conversations are kept in the window's database by
// default (paths.h: defaultDatabasePath(); --db PATH another, --no-db none), every message
// stored as it is written; continuing one (--conversation) restores its KV. Lines that start
// with "/" are commands (/help lists them), never sent to the model. Ctrl-C stops a reply (the
// partial reply is kept, marked stopped); Ctrl-C at the prompt, or twice during a reply, quits.
#include <QDir>
#include <QFileInfo>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <utility>

#include "app/chat/conversation_controller.h"
#include "app/chat/stored_turn.h"
#include "app/cli/cli_commands.h"
#include "app/cli/cli_common.h"
#include "app/cli/cli_store.h"
#include "app/cli_core/model_facts.h"
#include "app/common/paths.h"

namespace hearth::cli {
namespace {

// SIGINT, counted. The reply's text callback stops the reply at its next token; the prompt's
// read returns (the handler is installed without SA_RESTART) and the chat ends. A third Ctrl-C
// before the chat reacts (a long prompt still being read) ends the process at once; every
// message is in the database by then, a streamed reply up to its last second.
std::atomic<int> gInterrupts{0};
static_assert(std::atomic<int>::is_always_lock_free);  // safe in a signal handler

void onInterrupt(int) {
    if (gInterrupts.fetch_add(1) + 1 >= 3) _exit(130);
}

class InterruptScope {
public:
    InterruptScope() {
        struct sigaction sa = {};
        sa.sa_handler = onInterrupt;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;  // no SA_RESTART: a read at the prompt returns
        sigaction(SIGINT, &sa, &previous_);
    }
    ~InterruptScope() { sigaction(SIGINT, &previous_, nullptr); }
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;

private:
    struct sigaction previous_ = {};
};

const char* const kHelp =
    "Commands:\n"
    "  /help    this list\n"
    "  /more    continue the last reply (after the token limit or Ctrl-C)\n"
    "  /reset   start a new conversation (the current one stays in the database)\n"
    "  /exit    quit (also /quit, Ctrl-D, or Ctrl-C at the prompt)\n"
    "  //text   send a message that starts with \"/\"\n"
    "Ctrl-C during a reply stops it (the partial reply is kept, marked stopped); Ctrl-C twice quits.\n";

using OnText = std::function<bool(std::string_view)>;

// A chat's memory: the conversation store, or a list of messages that ends with the program.
class ChatSession {
public:
    virtual ~ChatSession() = default;
    virtual Result<Turn> reply(const std::string& userText, const OnText& onText) = 0;
    virtual Result<Turn> more(const OnText& onText) = 0;
    virtual Result<void> reset() = 0;
    virtual std::string where() const = 0;  // where the conversation is kept, for the banner
    virtual std::string farewell() const = 0;  // the last line
};

// Steps the engine until the turn's request finishes; onText false cancels it.
Result<Turn> runTurn(Engine& e, TurnInput input, const OnText& onText) {
    auto turn = startTurn(e, nullptr, std::move(input));
    if (!turn) return std::unexpected(turn.error());
    while (true) {
        for (const EngineEvent& ev : e.step()) {
            if (ev.request != turn->id) continue;
            const bool finished = turn->take(ev);
            if (!ev.text.empty() && !onText(ev.text)) e.cancel(turn->id);
            if (finished) return turn->error ? Result<Turn>(std::unexpected(*turn->error)) : std::move(*turn);
        }
        if (e.idle()) return fail(ErrorCode::InvalidArgument, "the request ended without a finish event");
    }
}

class MemorySession final : public ChatSession {
public:
    MemorySession(Engine& e, GenerateRequest req, std::string system, bool thinking)
        : e_(e), req_(std::move(req)), system_(std::move(system)), thinking_(thinking) {
        (void)reset();
    }
    Result<Turn> reply(const std::string& userText, const OnText& onText) override {
        messages_.push_back({ChatRole::User, userText});
        auto t = runTurn(e_, {.messages = messages_, .request = req_, .restoreKv = false, .enableThinking = thinking_},
                         onText);
        if (!t) {
            messages_.pop_back();
            return t;
        }
        messages_.push_back({ChatRole::Assistant, t->text});
        return t;
    }
    Result<Turn> more(const OnText& onText) override {
        if (messages_.empty() || messages_.back().role != ChatRole::Assistant)
            return fail(ErrorCode::InvalidArgument, "there is no reply to continue");
        std::vector<ChatMessage> before(messages_.begin(), messages_.end() - 1);
        auto t = runTurn(e_,
                         {.messages = before,
                          .request = req_,
                          .restoreKv = false,
                          .enableThinking = thinking_,
                          .replyPrefix = messages_.back().content},
                         onText);
        if (t) messages_.back().content += t->text;
        return t;
    }
    Result<void> reset() override {
        messages_.clear();
        if (!system_.empty()) messages_.push_back({ChatRole::System, system_});
        return {};
    }
    std::string where() const override { return "not saved (--no-db)"; }
    std::string farewell() const override { return "Bye (nothing was saved: --no-db)."; }

private:
    Engine& e_;
    GenerateRequest req_;
    std::string system_;
    bool thinking_;
    std::vector<ChatMessage> messages_;
};

class StoredSession final : public ChatSession {
public:
    StoredSession(Engine& e, ConversationStore& store, int64_t conversationId, GenerateRequest req, std::string system,
                  StoredTurnOptions options)
        : e_(e),
          store_(store),
          id_(conversationId),
          req_(std::move(req)),
          system_(std::move(system)),
          options_(options) {}
    Result<Turn> reply(const std::string& userText, const OnText& onText) override {
        // Titled by its first message, as the window titles its own.
        const std::string title = titleFromMessage(QString::fromStdString(userText)).toStdString();
        if (id_ == 0) {  // created with its first message: a chat left at once leaves no empty one
            auto c = store_.createConversation(title, system_);
            if (!c) return std::unexpected(c.error());
            id_ = c->id;
        } else if (auto c = store_.conversation(id_); c && *c && (*c)->activeLeafId == 0 && (*c)->title.empty()) {
            (void)store_.renameConversation(id_, title);  // an empty one the window made
        }
        return taken(runStoredTurn(e_, store_, id_, userText, req_, options_, onText));
    }
    Result<Turn> more(const OnText& onText) override {
        if (id_ == 0) return fail(ErrorCode::InvalidArgument, "there is no reply to continue");
        return taken(continueStoredReply(e_, store_, id_, req_, options_, onText));
    }
    Result<void> reset() override {
        id_ = 0;
        return {};
    }
    std::string where() const override {
        return (id_ == 0 ? std::string("a new conversation") : "conversation " + std::to_string(id_)) + " in " +
            store_.path();
    }
    std::string farewell() const override {
        return id_ == 0 ? std::string("Bye (nothing to save).")
                        : "Bye: conversation " + std::to_string(id_) + " saved in " + store_.path() + ".";
    }

private:
    // Only the first turn restores the KV: later ones continue the engine's own.
    Result<Turn> taken(Result<StoredTurnResult> r) {
        options_.kvRestore = false;
        if (!r) return std::unexpected(r.error());
        return static_cast<Turn&>(*r);
    }
    Engine& e_;
    ConversationStore& store_;
    int64_t id_;
    GenerateRequest req_;
    std::string system_;
    StoredTurnOptions options_;
};

// What the chat says on stderr after a reply: why it ended when that was not the model's own
// choice, the speed, and the KV notes.
void reportReply(const Turn& t, int maxTokens, bool firstTurn) {
    if (!t.kvNote.empty()) std::fprintf(stderr, "hearth-cli: %s; recomputed\n", t.kvNote.c_str());
    if (firstTurn && t.kvRestoredTokens > 0)
        std::fprintf(stderr, "[%d tokens of KV restored from the database]\n", t.kvRestoredTokens);
    if (t.omittedTurns > 0)
        std::fprintf(stderr, "[the %d oldest messages are left out: they no longer fit the context]\n", t.omittedTurns);
    switch (t.reason) {
    case FinishReason::Length:
        std::fprintf(stderr, "[reply stopped at the %d-token limit; /more or --max-tokens N]\n", maxTokens);
        break;
    case FinishReason::Cancelled: std::fprintf(stderr, "[stopped; the partial reply is kept]\n"); break;
    case FinishReason::Context:
        std::fprintf(stderr, "[reply stopped: the context window is full; /reset starts a new conversation]\n");
        break;
    case FinishReason::Timeout: std::fprintf(stderr, "[reply stopped at the --timeout-ms limit]\n"); break;
    default: break;
    }
    const GenerateTimings& g = t.timings;
    std::fprintf(stderr, "[%zu tokens, %.1f tokens/s; first token after %.0f ms]\n", t.tokens.size(),
                 g.decodeTokensPerSecond(), g.ttftMs);
}

// Lines of standard input, read with poll() and read() rather than stdio: a Ctrl-C that lands
// just before the read would otherwise leave the chat waiting for a line. The wait wakes every
// 200 ms to look at the interrupt count.
class LineReader {
public:
    // False at the end of input or on Ctrl-C.
    bool next(std::string& line) {
        std::fprintf(stderr, "> ");
        std::fflush(stderr);
        while (true) {
            if (gInterrupts.load() != 0) return false;
            if (const size_t nl = buffer_.find('\n'); nl != std::string::npos) {
                line = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                if (!line.empty() && line.back() == '\r') line.pop_back();
                return true;
            }
            if (ended_) {
                if (buffer_.empty()) return false;
                line = std::exchange(buffer_, {});
                return true;
            }
            pollfd in = {.fd = STDIN_FILENO, .events = POLLIN, .revents = 0};
            if (poll(&in, 1, 200) <= 0) continue;  // timeout, or EINTR from Ctrl-C
            char chunk[4096];
            const ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
            if (n > 0) buffer_.append(chunk, static_cast<size_t>(n));
            else if (n == 0 || errno != EINTR) ended_ = true;
        }
    }

private:
    std::string buffer_;
    bool ended_ = false;
};

// The conversation loop. Returns the exit code.
int converse(ChatSession& session, int maxTokens) {
    InterruptScope interrupts;
    bool firstTurn = true;
    LineReader input;
    std::string line;
    while (true) {
        gInterrupts = 0;
        if (!input.next(line)) {
            std::fprintf(stderr, "\n");
            break;
        }
        if (line.empty()) continue;
        std::string send = line;
        bool more = false;
        if (line == "/help" || line == "/?") {
            std::fputs(kHelp, stderr);
            continue;
        }
        if (line == "/exit" || line == "/quit") break;
        if (line == "/reset" || line == "/new") {
            if (auto r = session.reset(); !r) failWith(r.error());
            else std::fprintf(stderr, "[a new conversation: %s]\n", session.where().c_str());
            continue;
        }
        if (line == "/more") {
            more = true;
        } else if (line.rfind("//", 0) == 0) {
            send = line.substr(1);
        } else if (line[0] == '/') {
            std::fprintf(stderr, "hearth-cli: unknown command %s; /help lists the commands\n", line.c_str());
            continue;
        }
        const OnText onText = [](std::string_view t) {
            writeOut(t);
            return gInterrupts.load() == 0;
        };
        auto r = more ? session.more(onText) : session.reply(send, onText);
        writeOut("\n");
        if (!r) {
            failWith(r.error());
            continue;
        }
        reportReply(*r, maxTokens, firstTurn);
        firstTurn = false;
        if (gInterrupts.load() >= 2) break;  // Ctrl-C twice: quit
    }
    std::fprintf(stderr, "%s\n", session.farewell().c_str());
    return 0;
}

QList<QCommandLineOption> chatOptions() {
    QList<QCommandLineOption> options = storeOptions();
    options.append(QCommandLineOption("no-db", "chat: keep the conversation in memory only (no database)."));
    return options;
}

int cmdChat(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("chat needs --model");
    if (p.isSet("no-db") && (p.isSet("db") || p.isSet("conversation")))
        return usageError("--no-db keeps nothing: it cannot be used with --db or --conversation");
    GenerateRequest req;
    QString error;
    if (!readSampling(p, req, error)) return usageError(error);
    if (req.maxTokens < 0) return usageError("--max-tokens must be >= 0");
    const std::string system = p.value("system").toStdString();
    std::unique_ptr<ConversationStore> store;
    std::unique_ptr<Engine> engine;
    std::unique_ptr<ChatSession> session;
    size_t nMessages = 0;
    if (p.isSet("no-db")) {
        auto e = loadEngine(p);
        if (!e) return failWith(e.error());
        engine = std::move(*e);
        session = std::make_unique<MemorySession>(*engine, req, system, thinks(p));
    } else {
        const QString path = p.isSet("db") ? p.value("db") : defaultDatabasePath();
        QDir().mkpath(QFileInfo(path).absolutePath());
        store = openStoreOrReport(p, path);
        if (!store) return 1;
        auto e = loadEngineWithStore(p, *store);
        if (!e) return failWith(e.error());
        engine = std::move(*e);
        int64_t conversationId = 0;  // 0: a new one, created with the first message
        if (p.isSet("conversation")) {
            auto conv = findConversation(*store, p.value("conversation").toStdString(), true, system);
            if (!conv) return failWith(conv.error());
            auto branch = store->activeBranch(conv->id);
            if (!branch) return failWith(branch.error());
            conversationId = conv->id;
            nMessages = branch->size();
        }
        session =
            std::make_unique<StoredSession>(*engine, *store, conversationId, req, system,
                                            StoredTurnOptions{.kvRestore = !p.isSet("no-kv-restore"),
                                                              .enableThinking = thinks(p),
                                                              .modelName = core::readableModelName(engine->file())});
    }
    std::fprintf(stderr, "Chatting with %s (%s); %s", core::readableModelName(engine->file()).c_str(),
                 engine->backendName().c_str(), session->where().c_str());
    if (store && p.isSet("conversation")) std::fprintf(stderr, " (%zu messages)", nMessages);
    std::fprintf(stderr, ".\n/help lists the commands; Ctrl-C stops a reply; Ctrl-C at the prompt or Ctrl-D quits.\n");
    return converse(*session, req.maxTokens);
}

}  // namespace

Command chatCommand() {
    return {"chat",
            "  chat     --model PATH [--system TEXT] [--no-think] [--max-tokens N] [SAMPLING] [--stop STR]...\n"
            "           [--timeout-ms N] [--ctx N] [--kv-type f16|q8_0]\n"
            "           [--db PATH] [--conversation ID] [--no-kv-restore] [--disk-budget-mb MB] | [--no-db]\n"
            "           (kept in the window's database unless --db or --no-db)\n",
            chatOptions, cmdChat};
}

}  // namespace hearth::cli
