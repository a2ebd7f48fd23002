// hearth-cli generate/chat --remote URL --remote-model NAME [--api-key-env VAR]: the same
// replies on a remote OpenAI-compatible server, through the window's RemoteEngine (streaming,
// reasoning in a <think> span, the same error words). The key comes from the environment
// variable named, never from the command line (where ps and shell history would show it).
#include <QCoreApplication>
#include <QEventLoop>
#include <QProcessEnvironment>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "app/cli/cli_commands.h"
#include "app/remote/remote_engine.h"

namespace hearth::cli {
namespace {

QList<QCommandLineOption> remoteOptions() {
    return {{"remote", "generate/chat: an OpenAI-compatible server's address (http://host:8000[/v1]).", "url"},
            {"remote-model", "generate/chat --remote: the model id to ask for (GET /v1/models lists them).", "name"},
            {"api-key-env", "generate/chat --remote: the environment variable holding the API key.", "var"},
            {"remote-timeout", "generate/chat --remote: seconds without a byte before the reply fails.", "s", "120"},
            {"db", "", "path"},
            {"conversation", "", "id"}};
}

// One reply: its text streamed to stdout; false (after a message on stderr) when it failed.
bool streamReply(RemoteEngine& engine, ReplyRequest request, QString& reply) {
    QEventLoop loop;
    bool ok = true;
    reply.clear();
    const quint64 ticket = engine.generate(std::move(request));
    auto text = QObject::connect(&engine, &ReplyEngine::textReady, &loop, [&](quint64 t, const QString& s) {
        if (t != ticket) return;
        reply += s;
        writeOut(s.toStdString());
    });
    auto done = QObject::connect(&engine, &ReplyEngine::replyFinished, &loop, [&](const ReplyStats& s) {
        if (s.ticket == ticket) loop.quit();
    });
    auto failed = QObject::connect(&engine, &ReplyEngine::replyFailed, &loop, [&](quint64 t, const QString& m) {
        if (t != ticket) return;
        std::fprintf(stderr, "\nhearth-cli: %s\n", qPrintable(m));
        ok = false;
        loop.quit();
    });
    loop.exec();
    QObject::disconnect(text), QObject::disconnect(done), QObject::disconnect(failed);
    return ok;
}

bool readRemoteSettings(const QCommandLineParser& p, RemoteEndpoint& e, ChatSettings& s, QString& error) {
    e.baseUrl = p.value("remote");
    e.model = p.value("remote-model");
    if (e.model.isEmpty()) error = "--remote needs --remote-model NAME";
    if (!number(p, "remote-timeout", e.timeoutSeconds, error) || !error.isEmpty()) return false;
    if (p.isSet("db") || p.isSet("conversation")) {
        error = "--remote does not use --db: a remote conversation lives in this command's memory";
        return false;
    }
    if (p.isSet("api-key-env")) {
        const QString var = p.value("api-key-env");
        e.apiKey = QProcessEnvironment::systemEnvironment().value(var);
        if (e.apiKey.isEmpty()) {
            error = "--api-key-env " + var + ": that environment variable is not set or empty";
            return false;
        }
    }
    GenerateRequest g;
    if (!readSampling(p, g, error)) return false;
    s.sampling = g.sampling;
    s.maxTokens = g.maxTokens;
    s.seed = p.isSet("seed") ? static_cast<int64_t>(g.sampling.seed) : -1;
    for (const std::string& stop : g.stop) s.stop.append(QString::fromStdString(stop));
    s.systemPrompt = p.value("system");
    return true;
}

}  // namespace

int runRemote(const QString& command, const QStringList& args) {
    QCommandLineParser p;
    QString error;
    if (!parseOptions(p, QStringList{"hearth-cli"} + args, error, remoteOptions())) return usageError(error);
    RemoteEndpoint endpoint;
    ReplyRequest request;
    if (!readRemoteSettings(p, endpoint, request.settings, error)) return usageError(error);
    RemoteEngine engine;
    engine.setEndpoint(endpoint);
    QString reply;
    if (command == QLatin1String("generate")) {
        std::string prompt;
        if (!readPromptText(p, prompt, error)) return usageError(error);
        request.turns = {{ChatRole::User, QString::fromStdString(prompt)}};
        const bool ok = streamReply(engine, request, reply);
        writeOut("\n");
        return ok ? 0 : 1;
    }
    std::fprintf(stderr, "Chat with %s. /exit or Ctrl-D quits.\n", qPrintable(engine.remoteTarget()));
    std::string line;
    while (true) {
        std::fprintf(stderr, "> ");
        std::fflush(stderr);
        if (!std::getline(std::cin, line) || line == "/exit") break;
        if (line.empty()) continue;
        request.turns.append({ChatRole::User, QString::fromStdString(line)});
        const bool ok = streamReply(engine, request, reply);
        writeOut("\n");
        // A failed reply leaves the user's line in the history: the next line continues after it.
        if (ok) request.turns.append({ChatRole::Assistant, reply});
    }
    return 0;
}

}  // namespace hearth::cli
