// hearth-cli chat (tokenize and info are the Qt-free core's: app/cli_core/core_commands.cpp).
#include <cstdio>
#include <iostream>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_common.h"
#include "app/cli/cli_store.h"

namespace hearth::cli {
namespace {

int cmdChat(const QCommandLineParser& p) {
    if (p.isSet("db")) return runStoredChat(p);  // cli_store_chat.cpp
    if (!p.isSet("model")) return usageError("chat needs --model");
    GenerateRequest req;
    QString error;
    if (!readSampling(p, req, error)) return usageError(error);
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    Engine& e = **engine;
    std::vector<ChatMessage> messages;
    if (p.isSet("system")) messages.push_back({ChatRole::System, p.value("system").toStdString()});
    std::fprintf(stderr, "Chatting with %s (%s). /reset starts over, /exit or Ctrl-D quits.\n", e.config().name.c_str(),
                 e.backendName().c_str());
    std::string line;
    while (true) {
        std::fprintf(stderr, "> ");
        std::fflush(stderr);
        if (!std::getline(std::cin, line) || line == "/exit") break;
        if (line == "/reset") {
            messages.resize(p.isSet("system") ? 1 : 0);
            continue;
        }
        if (line.empty()) continue;
        messages.push_back({ChatRole::User, line});
        req.prompt = e.chatPrompt(messages, {.enableThinking = thinks(p)});
        std::string reply;
        auto result = e.generate(req, [&](TokenId, std::string_view piece) {
            reply += piece;
            writeOut(piece);
            return true;
        });
        writeOut("\n");
        if (!result) {
            failWith(result.error());
            messages.pop_back();
            continue;
        }
        messages.push_back({ChatRole::Assistant, reply});
    }
    return 0;
}

}  // namespace

Command chatCommand() {
    return {"chat",
            "  chat     --model PATH [--system TEXT] [--no-think] [--max-tokens N] [SAMPLING] [--db PATH "
            "[--conversation ID]]\n",
            storeOptions, cmdChat};
}

}  // namespace hearth::cli
