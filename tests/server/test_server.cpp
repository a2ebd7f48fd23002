// hearth-cli serve against real clients: the official openai Python client (tests/server/
// openai_client.py) for chat and completions, streaming, stop strings, usage, logprobs and the
// errors; 8 concurrent streams against their solo runs; a client killed mid-stream; a full
// queue. The server runs SmolLM2-135M-Instruct on loopback with 2 threads.
#include <QJsonArray>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>
#include <httplib.h>
#include <fcntl.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>

#include "tests/support/python_json.h"
#include "tests/support/test_env.h"

using namespace hearth::test;

namespace {

const QString kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr int kMaxBody = 65536;
const QString kKey = "test-key-1";

// A `hearth-cli serve` child process on a free loopback port.
struct Server {
    QProcess process;
    int port = 0;
    QByteArray err;

    // Starts it and reads its port; then waits for the model when asked.
    bool start(const QStringList& extra, bool waitLoaded = true) {
        process.start(cliExe(),
                      QStringList{"serve", "--model", modelFile(kModel), "--port", "0", "--threads", "2"} + extra);
        if (!process.waitForStarted(10000)) return false;
        return waitFor(QRegularExpression("listening on http://[0-9.]+:(\\d+)"), 1) && (!waitLoaded || waitLoaded_());
    }
    bool waitLoaded_() { return waitFor(QRegularExpression("model .* loaded"), 0); }
    bool waitFor(const QRegularExpression& re, int portGroup) {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 60000) {
            const auto m = re.match(QString::fromUtf8(err));
            if (m.hasMatch()) {
                if (portGroup) port = m.captured(portGroup).toInt();
                return true;
            }
            if (process.state() != QProcess::Running) return false;
            process.waitForReadyRead(100);
            err += process.readAllStandardError();
        }
        return false;
    }
    ~Server() {
        if (process.state() == QProcess::NotRunning) return;
        process.kill();
        process.waitForFinished();
    }
    QString baseUrl() const { return QStringLiteral("http://127.0.0.1:%1").arg(port); }
    // SIGTERM, as a user's Ctrl+C or a service manager would end it; true when it exited cleanly.
    bool stop() {
        process.terminate();
        if (!process.waitForFinished(20000)) {
            process.kill();
            process.waitForFinished();
            return false;
        }
        return process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
    }
};

}  // namespace

class TestServer : public QObject {
    Q_OBJECT

    Server server_;
    QString script_;

    QJsonObject ask(const QString& scenario, const Server& s, QJsonObject extra = {}) {
        extra.insert("scenario", scenario);
        extra.insert("base_url", s.baseUrl());
        extra.insert("api_key", &s == &server_ ? kKey : QString());
        extra.insert("max_body", kMaxBody);
        extra.insert("cli", cliExe());
        extra.insert("model", modelFile(kModel));
        return askPython(pythonExe(), script_, extra, 300000);
    }

    static void verifyAnswer(const QJsonObject& a) {
        QVERIFY2(!a.contains("error"), qPrintable(a.value("error").toString()));
        const QJsonArray failures = a.value("failures").toArray();
        QStringList lines;
        for (const auto& f : failures) lines << f.toString();
        QVERIFY2(failures.isEmpty(), qPrintable(lines.join("\n")));
    }

private slots:
    void initTestCase() {
        std::signal(SIGPIPE, SIG_IGN);  // a write to the FIFO after the loader closed it fails, not kills
        HEARTH_REQUIRE_FILE(modelFile(kModel));
        script_ = sourceDir() + "/tests/server/openai_client.py";
        QProcess probe;
        probe.start(pythonExe(), {"-c", "import openai"});
        if (!probe.waitForFinished(60000) || probe.exitCode() != 0) {
            const QByteArray msg =
                "the test Python lacks openai (packaging/scripts/setup-python.sh): " + pythonExe().toUtf8();
            if (underCi()) QFAIL(msg.constData());
            QSKIP(msg.constData());
        }
        QVERIFY2(server_.start({"--parallel", "8", "--api-key", kKey, "--max-body", QString::number(kMaxBody)}),
                 server_.err.constData());
    }

    // While the model loads the server already answers, with 503 and an error object. The
    // "model" is a FIFO, so loading waits (in its first read) until the test writes to it; what
    // it writes is no GGUF file, so the server then exits with code 1 and the reason.
    void loadingIs503ThenABadModelExits() {
        QTemporaryDir dir;
        const QString fifo = dir.filePath("model.gguf");
        QCOMPARE(mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        Server s;
        s.process.start(cliExe(), {"serve", "--model", fifo, "--port", "0"});
        QVERIFY(s.process.waitForStarted(10000));
        QVERIFY2(s.waitFor(QRegularExpression("listening on http://[0-9.]+:(\\d+)"), 1), s.err.constData());
        httplib::Client c("127.0.0.1", s.port);
        for (const char* path : {"/health", "/v1/models"}) {
            const auto r = c.Get(path);
            QVERIFY(r);
            QCOMPARE(r->status, 503);
            QVERIFY2(r->body.find("\"code\":\"model_loading\"") != std::string::npos, r->body.c_str());
        }
        const auto chat =
            c.Post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"Hi"}]})", "application/json");
        QVERIFY(chat);
        QCOMPARE(chat->status, 503);
        // Each open of the FIFO by the loader (it reads, then maps) gets a few bytes and the end.
        QElapsedTimer t;
        t.start();
        while (s.process.state() == QProcess::Running && t.elapsed() < 30000) {
            if (const int fd = ::open(QFile::encodeName(fifo).constData(), O_WRONLY | O_NONBLOCK); fd >= 0) {
                // The loader may close its end between our open and write (EPIPE): try again.
                const ssize_t n = ::write(fd, "not a GGUF file", 15);
                QVERIFY2(n == 15 || (n < 0 && errno == EPIPE), std::strerror(errno));
                ::close(fd);
            }
            s.process.waitForFinished(50);
        }
        QCOMPARE(s.process.state(), QProcess::NotRunning);
        QCOMPARE(s.process.exitCode(), 1);
        QVERIFY(s.process.readAllStandardError().contains("hearth-cli:"));
    }

    void chatCompletionsStopUsageLogprobs() {
        const QJsonObject a = ask("basics", server_);
        verifyAnswer(a);
        QVERIFY(a.value("completion_text").toString().contains("Paris"));
        QVERIFY(a.value("cached_tokens").toInt() >= 16);  // at least one whole block of the repeated prompt
    }

    // The model is reported by its readable name (readableModelName), not its file's base name
    // or its general.name ("Smollm2 135M 8k Lc100K Mix1 Ep2").
    void modelsListTheReadableName() {
        httplib::Client c("127.0.0.1", server_.port);
        c.set_bearer_token_auth(kKey.toStdString());
        for (const char* path : {"/v1/models", "/health"}) {
            const auto r = c.Get(path);
            QVERIFY(r);
            QCOMPARE(r->status, 200);
            QVERIFY2(r->body.find("\"SmolLM2-135M-Instruct\"") != std::string::npos, r->body.c_str());
        }
    }

    void errorsKeepServing() { verifyAnswer(ask("errors", server_)); }

    void eightConcurrentStreamsEqualSolo() {
        const QJsonObject a = ask("concurrent", server_);
        verifyAnswer(a);
        QVERIFY2(a.value("peak_running").toInt() >= 4, "the streams did not run together");
    }

    void killedClientFreesBlocks() {
        const QJsonObject a = ask("cancel", server_, {{"ban", QJsonArray{0, 1, 2}}});
        verifyAnswer(a);
        qInfo("blocks idle %s, streaming %s, after the kill %s (%.0f ms)",
              QJsonDocument(a.value("idle").toObject()).toJson(QJsonDocument::Compact).constData(),
              QJsonDocument(a.value("busy").toObject()).toJson(QJsonDocument::Compact).constData(),
              QJsonDocument(a.value("after").toObject()).toJson(QJsonDocument::Compact).constData(),
              a.value("freed_ms").toDouble());
        QVERIFY(a.value("freed_ms").toDouble() < 1000);
    }

    void fullQueueIs429() {
        Server s;
        QVERIFY2(s.start({"--parallel", "1", "--queue", "1"}), s.err.constData());
        verifyAnswer(ask("queue", s));
        QVERIFY(s.stop());
    }

    void cleanupTestCase() {
        if (server_.process.state() == QProcess::Running) QVERIFY2(server_.stop(), server_.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestServer)
#include "test_server.moc"
