// hearth-cli tokenize, chat and info.
#include <QJsonDocument>
#include <cstdio>
#include <iostream>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_common.h"
#include "app/cli/cli_store.h"
#include "app/cli/info_text.h"
#include "app/common/model_info.h"
#include "engine/model/gguf.h"
#include "engine/tokenizer/tokenizer.h"

namespace hearth::cli {
namespace {

int cmdTokenize(const QCommandLineParser& p) {
    if (!p.isSet("model") || !p.isSet("text")) return usageError("tokenize needs --model and --text");
    // The tokenizer alone, as the engine builds it, without the weights: a vocabulary-only GGUF
    // (llama.cpp's ggml-vocab-*.gguf) has no tensors, and a model's need not be loaded for this.
    auto file = GgufFile::open(p.value("model").toStdString());
    if (!file) return failWith(file.error());
    auto tokenizer = Tokenizer::fromGguf(**file);
    if (!tokenizer) return failWith(tokenizer.error());
    const Tokenizer& tok = **tokenizer;
    const std::vector<TokenId> ids =
        tok.encode(p.value("text").toStdString(), tok.addBosByDefault() && !p.isSet("no-bos"), false);
    if (p.isSet("json")) {
        writeOut(QJsonDocument(QJsonObject{{"tokens", toJson(ids)}}).toJson(QJsonDocument::Compact).toStdString() +
                 "\n");
        return 0;
    }
    for (TokenId id : ids) {
        const QString piece = QString::fromStdString(tok.pieceText(id));
        writeOut(QStringLiteral("%1\t%2\n").arg(id).arg(piece).toStdString());
    }
    return 0;
}

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

int cmdInfo(const QCommandLineParser& p) {
    writeOut(cpuText().toStdString());
    writeOut(backendsText().toStdString());
    if (!p.isSet("model")) return 0;
    // The file is opened and its model and vocabulary built once: by the engine when Hearth runs
    // it; only for a file it cannot run, by inspectModel, for the facts and the reason.
    auto engine = loadEngine(p);
    if (!engine) {
        auto inspected = inspectModel(p.value("model"));
        if (!inspected) return failWith(inspected.error());
        writeOut(modelFileText(*inspected).toStdString());
        return failWith(engine.error());
    }
    writeOut(modelFileText(describeModel((**engine).file(), &(**engine).chatFormat())).toStdString());
    writeOut(modelInfoText(**engine).toStdString());
    return 0;
}

}  // namespace

Command tokenizeCommand() {
    return {"tokenize", "  tokenize --model PATH --text TEXT [--no-bos] [--json]\n", nullptr, cmdTokenize};
}

Command chatCommand() {
    return {"chat",
            "  chat     --model PATH [--system TEXT] [--no-think] [--max-tokens N] [SAMPLING] [--db PATH "
            "[--conversation ID]]\n",
            storeOptions, cmdChat};
}

Command infoCommand() { return {"info", "  info     [--model PATH]\n", nullptr, cmdInfo}; }

}  // namespace hearth::cli
