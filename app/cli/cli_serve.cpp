// hearth-cli serve: the local OpenAI-compatible server (app/server) with the model on the
// engine host's thread. It listens before the model is loaded (requests get 503 meanwhile)
// and runs until SIGINT or SIGTERM.
#include <QCoreApplication>
#include <QTimer>
#include <atomic>
#include <csignal>
#include <cstdio>

#include "app/cli/cli_commands.h"
#include "app/common/error_text.h"
#include "app/engine_host/engine_host.h"
#include "app/server/api_server.h"

namespace hearth::cli {
namespace {

std::atomic<bool> quitRequested{false};

QList<QCommandLineOption> serveOptions() {
    return {{"host", "serve: address to listen on.", "addr", "127.0.0.1"},
            {"port", "serve: port (0 = any free port).", "n", "8080"},
            {"api-key", "serve: every request needs Authorization: Bearer KEY.", "key"},
            {"parallel", "serve: requests decoding together (1..64).", "n", "4"},
            {"queue", "serve: requests waiting for a slot before 429 (0..1024).", "n", "16"},
            {"max-body", "serve: largest request body in bytes.", "n", "4194304"},
            {"threads", "CPU threads (0 = one per physical core).", "n", "0"}};
}

bool readServerOptions(const QCommandLineParser& p, server::ServerOptions& o, LoadOptions& load, QString& error) {
    o.host = p.value("host").toStdString();
    o.apiKey = p.value("api-key").toStdString();
    if (!number(p, "port", o.port, error) || !number(p, "parallel", o.parallel, error) ||
        !number(p, "queue", o.queue, error) || !number(p, "max-body", o.maxBodyBytes, error) ||
        !number(p, "threads", load.threads, error) || !number(p, "ctx", load.contextLength, error))
        return false;
    if (o.port < 0 || o.port > 65535) error = "--port must be in 0..65535";
    else if (o.parallel < 1 || o.parallel > 64) error = "--parallel must be in 1..64";
    else if (o.queue < 0 || o.queue > 1024) error = "--queue must be in 0..1024";
    else if (p.isSet("api-key") && o.apiKey.empty()) error = "--api-key must not be empty";
    else if (!parseKvElementType(p.value("kv-type").toStdString())) error = "--kv-type must be f16 or q8_0";
    load.kvType = p.value("kv-type");
    // One more sequence than the server fills, so a reply of another front end on the same
    // engine (the window) is admitted at once rather than behind the server's clients.
    load.maxRunning = o.parallel + 1;
    return error.isEmpty();
}

int runServe(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("serve needs --model");
    server::ServerOptions options;
    LoadOptions load;
    QString error;
    if (!readServerOptions(p, options, load, error)) return usageError(error);
    EngineHost host;
    server::ApiServer api(host, options);
    const auto port = api.bind();
    if (!port) return failWith(port.error());
    api.start();
    std::fprintf(stderr, "hearth-cli serve: listening on http://%s:%d\n", options.host.c_str(), *port);
    int exitCode = 0;
    QObject::connect(host.worker(), &EngineWorker::modelLoaded, qApp, [&](const LoadedModel& m) {
        const QString name = m.file.name;  // readable (readableModelName), as the window shows it
        api.setModel({name.toStdString(), {m.contextLength, m.file.defaults.sampling}});
        std::fprintf(stderr, "hearth-cli serve: model %s loaded (%s, context %d, %d in parallel)\n", qPrintable(name),
                     qPrintable(m.backend), m.contextLength, options.parallel);
    });
    QObject::connect(host.worker(), &EngineWorker::loadFailed, qApp, [&](const QString& message) {
        std::fprintf(stderr, "hearth-cli: %s\n", qPrintable(message));
        exitCode = 1;
        QCoreApplication::quit();
    });
    host.loadModel(p.value("model"), load);
    std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, never the end of the server
    std::signal(SIGINT, [](int) { quitRequested = true; });
    std::signal(SIGTERM, [](int) { quitRequested = true; });
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, qApp, [] {
        if (quitRequested) QCoreApplication::quit();
    });
    poll.start(100);
    QCoreApplication::exec();
    api.stop();  // before the engine host goes: handlers may be waiting on the engine thread
    return exitCode;
}

}  // namespace

Command serveCommand() {
    return {"serve",
            "  serve       --model PATH [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--parallel N]\n"
            "              [--queue N] [--max-body BYTES] [--ctx N] [--threads N] [--kv-type f16|q8_0]\n",
            serveOptions, runServe};
}

}  // namespace hearth::cli
