// hearth-cli chat --db PATH [--conversation ID]: an interactive chat whose every message is
// stored as it is written; continuing a conversation restores its KV from the database.
#include <cstdio>
#include <iostream>

#include "app/cli/cli_store.h"
#include "app/chat/stored_turn.h"

namespace hearth::cli {

int runStoredChat(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("chat needs --model");
    GenerateRequest req;
    QString error;
    if (!readSampling(p, req, error)) return usageError(error);
    auto store = openStoreOrReport(p);
    if (!store) return 1;
    auto engine = loadEngineWithStore(p, *store);
    if (!engine) return failWith(engine.error());
    auto conv = p.isSet("conversation")
        ? findConversation(*store, p.value("conversation").toStdString(), true, p.value("system").toStdString())
        : store->createConversation("Chat", p.value("system").toStdString());
    if (!conv) return failWith(conv.error());
    auto branch = store->activeBranch(conv->id);
    if (!branch) return failWith(branch.error());
    std::fprintf(stderr, "Conversation %lld in %s (%zu messages). /exit or Ctrl-D quits.\n",
                 static_cast<long long>(conv->id), store->path().c_str(), branch->size());
    bool restore = !p.isSet("no-kv-restore");  // the first turn only: later ones continue the engine's KV
    std::string line;
    while (true) {
        std::fprintf(stderr, "> ");
        std::fflush(stderr);
        if (!std::getline(std::cin, line) || line == "/exit") break;
        if (line.empty()) continue;
        auto r = runStoredTurn(**engine, *store, conv->id, line, req, {restore, thinks(p)}, [](std::string_view t) {
            writeOut(t);
            return true;
        });
        writeOut("\n");
        if (!r) return failWith(r.error());
        if (!r->kvNote.empty()) std::fprintf(stderr, "hearth-cli: %s; recomputed\n", r->kvNote.c_str());
        if (restore && r->kvRestoredTokens > 0)
            std::fprintf(stderr, "[%d tokens of KV restored from the database]\n", r->kvRestoredTokens);
        restore = false;
    }
    return 0;
}

}  // namespace hearth::cli
