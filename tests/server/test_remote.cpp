// Remote mode against real peers: the window's reply controller on a remote endpoint (through
// the same EngineSwitch the window uses) against `hearth-cli serve` with an API key, and
// against llama.cpp's llama-server when packaging/scripts/build-llama-tools.sh has built it
// (SKIP with the reason otherwise). Streaming, stop, regenerate, an unreachable address and a
// timeout (loopback fakes: a silent server, one that stalls mid-stream) each give their words
// and keep the text; reasoning_content becomes the reply's reasoning; the key goes out as a
// bearer token, lives in a real keychain (GNOME Keyring in a private D-Bus session, see
// with_keyring.sh; without one, the app says so and keeps it nowhere), and never appears in
// the database, the settings file or the log. Also hearth-cli generate --remote.
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <unistd.h>

#include "app/chat/engine_switch.h"
#include "app/chat/model_controller.h"
#include "app/chat/remote_controller.h"
#include "app/chat/reply_controller.h"
#include "app/chat/settings_controller.h"
#include "app/engine_host/engine_host.h"
#include "app/store/conversation_store.h"
#include "tests/server/remote_fakes.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

const QString kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
const QString kKey = "sk-remote-test-7f3a9c";  // must never reach a file or the log
QFile* logFile = nullptr;

void logToFile(QtMsgType, const QMessageLogContext&, const QString& message) {
    if (logFile) logFile->write(message.toUtf8() + '\n'), logFile->flush();
    fprintf(stderr, "%s\n", qPrintable(message));
}

// A loopback server process (hearth-cli serve or llama-server) and its stderr.
struct ServerProcess {
    QProcess process;
    QByteArray err;
    ~ServerProcess() {
        process.kill();
        process.waitForFinished();
    }
    bool waitFor(const QRegularExpression& re, QRegularExpressionMatch* match = nullptr, int ms = 90000) {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < ms) {
            err += process.readAllStandardError();
            const auto m = re.match(QString::fromUtf8(err));
            if (m.hasMatch()) {
                if (match) *match = m;
                return true;
            }
            if (process.state() != QProcess::Running) return false;
            process.waitForReadyRead(100);
        }
        return false;
    }
};

int freePort() {
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

// The window's controllers without widgets, as gui_main.cpp wires them (no local model).
struct RemoteApp {
    explicit RemoteApp(const QString& dir)
        : settings(dir + "/settings.ini"),
          store(ConversationStore::open((dir + "/chats.sqlite").toStdString()).value()) {
        ChatSettings s;
        s.maxTokens = 24;
        s.sampling.temperature = 0;  // greedy: short, repeatable replies
        settings.setChatDefaults(s);
        models = std::make_unique<ModelController>(host, settings);
        conversations = std::make_unique<ConversationController>(*store, host);
        chatSettings = std::make_unique<SettingsController>(*conversations, *models, settings);
        remote = std::make_unique<RemoteController>(settings, keys);
        engines = std::make_unique<EngineSwitch>(host, *remote);
        replies = std::make_unique<ReplyController>(*conversations, *chatSettings, *models, *engines);
    }
    ~RemoteApp() {
        replies.reset(), engines.reset(), remote.reset(), chatSettings.reset(), conversations.reset(), models.reset();
    }
    MessageListModel* messages() { return conversations->messages(); }
    const MessageRow* lastRow(bool notice) {
        for (int i = messages()->rowCount() - 1; i >= 0; --i)
            if (messages()->row(i)->isNotice() == notice) return messages()->row(i);
        return nullptr;
    }
    QString lastNotice() { return lastRow(true) ? lastRow(true)->text : QString(); }
    const MessageRow* lastReply() { return lastRow(false); }
    QString storedText(qint64 id) { return QString::fromStdString(store->message(id).value().value().text); }
    // Sends text and waits until the reply has ended; false when it did not end in time.
    bool sendAndWait(const QString& text, int ms = 120000) {
        if (!replies->send(text)) return false;
        QElapsedTimer t;
        t.start();
        while (replies->generating() && t.elapsed() < ms) QTest::qWait(20);
        return !replies->generating();
    }

    AppSettings settings;
    std::unique_ptr<ConversationStore> store;
    EngineHost host;
    ApiKeyStore keys{QStringLiteral("Hearth test")};
    std::unique_ptr<ModelController> models;
    std::unique_ptr<ConversationController> conversations;
    std::unique_ptr<SettingsController> chatSettings;
    std::unique_ptr<RemoteController> remote;
    std::unique_ptr<EngineSwitch> engines;
    std::unique_ptr<ReplyController> replies;
};

}  // namespace

class TestRemote : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void keyGoesToTheKeychainOnly();
    void listsTheServersModels();
    void streamsFromHearthServer();
    void stopKeepsTheText();
    void regenerateMakesABranch();
    void wrongKeyIsRefused();
    void noModelChosen();
    void unreachableAddress();
    void silentServerTimesOut();
    void stallMidStreamKeepsText();
    void reasoningContentIsThinking();
    void cliGenerateRemote();
    void llamaServer();
    void cleanupTestCase();

private:
    void useEndpoint(const QString& url, const std::optional<QString>& key, int timeoutSeconds = 120);
    void expectFailureKeepsText(const QString& words);

    QTemporaryDir dir_;
    QFile log_;
    ServerProcess hearth_;
    QString hearthUrl_;
    std::unique_ptr<RemoteApp> app_;
};

void TestRemote::initTestCase() {
    HEARTH_REQUIRE_FILE(modelFile(kModel));
    QVERIFY(dir_.isValid());
    log_.setFileName(dir_.filePath("hearth.log"));
    QVERIFY(log_.open(QIODevice::WriteOnly));
    logFile = &log_;
    qInstallMessageHandler(logToFile);
    hearth_.process.start(cliExe(),
                          {"serve", "--model", modelFile(kModel), "--port", "0", "--threads", "2", "--api-key", kKey});
    QVERIFY(hearth_.process.waitForStarted(10000));
    QRegularExpressionMatch m;
    QVERIFY2(hearth_.waitFor(QRegularExpression("listening on (http://[0-9.]+:\\d+)"), &m), hearth_.err.constData());
    hearthUrl_ = m.captured(1);
    QVERIFY2(hearth_.waitFor(QRegularExpression("model .* loaded")), hearth_.err.constData());
    app_ = std::make_unique<RemoteApp>(dir_.path());
}

void TestRemote::useEndpoint(const QString& url, const std::optional<QString>& key, int timeoutSeconds) {
    QSignalSpy checked(app_->remote.get(), &RemoteController::keyChecked);
    app_->remote->apply({.enabled = true, .baseUrl = url, .model = "SmolLM2", .timeoutSeconds = timeoutSeconds}, key);
    if (key) QVERIFY(checked.wait(20000));
    QVERIFY(app_->remote->active());
}

void TestRemote::keyGoesToTheKeychainOnly() {
    useEndpoint(hearthUrl_, kKey);
    const bool keyring = qEnvironmentVariableIsSet("HEARTH_IN_KEYRING");
    if (keyring) {
        QVERIFY2(app_->remote->keyNote().isEmpty(), qPrintable(app_->remote->keyNote()));
        // A restart: a new controller over the same settings reads the key back from the keychain.
        RemoteController again(app_->settings, app_->keys);
        QSignalSpy read(&again, &RemoteController::keyChecked);
        QVERIFY(read.wait(20000));
        QVERIFY2(again.hasKey(), qPrintable(again.keyNote()));
    } else {  // no Secret Service: said plainly, and the key is used for this session only
        QVERIFY2(app_->remote->keyNote().contains("No system keychain"), qPrintable(app_->remote->keyNote()));
        QVERIFY(app_->remote->hasKey());
        qInfo(
            "no keychain in this environment (dbus-run-session or gnome-keyring-daemon missing): checked the "
            "'no keychain' path");
    }
}

void TestRemote::listsTheServersModels() {
    QSignalSpy listed(app_->remote.get(), &RemoteController::modelsListed);
    QSignalSpy failed(app_->remote.get(), &RemoteController::modelsFailed);
    app_->remote->listModels(hearthUrl_ + "/v1/", std::nullopt);  // the saved key: the same server
    QVERIFY(listed.wait(20000));
    QCOMPARE(listed.first().first().toStringList(), QStringList{"SmolLM2-135M-Instruct"} /* its readable name */);
    app_->remote->listModels(hearthUrl_, QStringLiteral("wrong"));
    QVERIFY(failed.wait(20000));
    QVERIFY2(failed.first().first().toString().contains("HTTP 401"), qPrintable(failed.first().first().toString()));
    app_->remote->listModels(QStringLiteral("http://127.0.0.1:%1").arg(freePort()), std::nullopt);
    QVERIFY(failed.wait(20000));
    QVERIFY2(failed.last().first().toString().contains("connection was refused"),
             qPrintable(failed.last().first().toString()));
}

void TestRemote::streamsFromHearthServer() {
    useEndpoint(hearthUrl_, kKey);
    app_->conversations->newConversation();
    QSignalSpy text(app_->engines.get(), &ReplyEngine::textReady);
    QSignalSpy finished(app_->replies.get(), &ReplyController::replyFinished);
    QVERIFY(app_->sendAndWait("What is the capital of France?"));
    QCOMPARE(finished.size(), 1);
    const auto stats = finished.first().first().value<ReplyStats>();
    QVERIFY2(!stats.remoteEndpoint.isEmpty(), "a remote reply says where it ran");
    QVERIFY(stats.generatedTokens > 1);
    QVERIFY(stats.promptTokens > 0);  // usage, from stream_options.include_usage
    QVERIFY2(text.size() > 1, "the reply arrives in several pieces (streamed)");
    const MessageRow* reply = app_->lastReply();
    QVERIFY(reply && reply->role == ChatRole::Assistant && !reply->text.isEmpty());
    QCOMPARE(app_->storedText(reply->id), reply->text);
    // The conversation records where it ran; there is no local KV for it.
    const auto conv = app_->store->conversation(app_->conversations->current()).value().value();
    QVERIFY2(QString::fromStdString(conv.model).contains(hearthUrl_), conv.model.c_str());
}

void TestRemote::stopKeepsTheText() {
    ChatSettings s = app_->chatSettings->conversationSettings();
    s.maxTokens = 400;
    app_->chatSettings->setConversationSettings(s);
    QSignalSpy text(app_->engines.get(), &ReplyEngine::textReady);
    QSignalSpy finished(app_->replies.get(), &ReplyController::replyFinished);
    QVERIFY(app_->replies->send("Write a long story about a dragon who learns to cook."));
    QVERIFY(text.wait(60000));
    app_->replies->stop();
    QTRY_VERIFY_WITH_TIMEOUT(!app_->replies->generating(), 30000);
    QCOMPARE(finished.size(), 1);
    const auto stats = finished.first().first().value<ReplyStats>();
    QCOMPARE(stats.finishReason, QStringLiteral("cancelled"));
    QVERIFY(stats.generatedTokens < 400);
    const MessageRow* reply = app_->lastReply();
    QVERIFY(!reply->text.isEmpty());
    QCOMPARE(reply->ending, QStringLiteral("stopped"));
    QCOMPARE(app_->storedText(reply->id), reply->text);
    s.maxTokens = 24;
    app_->chatSettings->setConversationSettings(s);
}

void TestRemote::regenerateMakesABranch() {
    const qint64 before = app_->lastReply()->id;
    const QString oldText = app_->lastReply()->text;
    app_->replies->regenerate();
    QTRY_VERIFY_WITH_TIMEOUT(!app_->replies->generating(), 120000);
    const MessageRow* reply = app_->lastReply();
    QVERIFY(reply->id != before);
    QVERIFY(!reply->text.isEmpty());
    QCOMPARE(reply->siblingCount, 2);
    QCOMPARE(app_->storedText(before), oldText);  // the first one is kept as a branch
}

void TestRemote::expectFailureKeepsText(const QString& words) {
    const int rowsBefore = app_->messages()->rowCount();
    const QString question = "Is anyone there? " + words;
    QVERIFY(app_->sendAndWait(question, 60000));
    QVERIFY2(app_->lastNotice().contains(words), qPrintable(app_->lastNotice()));
    QVERIFY2(app_->lastNotice().contains("kept"), qPrintable(app_->lastNotice()));
    QVERIFY(app_->messages()->rowCount() > rowsBefore);
    // The user's message is stored, and so is everything before it.
    bool found = false;
    for (int i = 0; i < app_->messages()->rowCount(); ++i)
        if (app_->messages()->row(i)->text == question)
            found = app_->storedText(app_->messages()->row(i)->id) == question;
    QVERIFY(found);
}

void TestRemote::wrongKeyIsRefused() {
    useEndpoint(hearthUrl_, QStringLiteral("not-the-key"));
    expectFailureKeepsText("HTTP 401");
    useEndpoint(hearthUrl_, kKey);  // and the right one works again
    QVERIFY(app_->sendAndWait("Hello again"));
    QVERIFY(!app_->lastReply()->text.isEmpty());
}

void TestRemote::noModelChosen() {
    app_->remote->apply({.enabled = true, .baseUrl = hearthUrl_, .model = {}, .timeoutSeconds = 120}, std::nullopt);
    expectFailureKeepsText("No model of the remote server is chosen");
}

void TestRemote::unreachableAddress() {
    useEndpoint(QStringLiteral("http://127.0.0.1:%1").arg(freePort()), std::nullopt);
    expectFailureKeepsText("connection was refused");
}

void TestRemote::silentServerTimesOut() {
    FakeSseServer silent(FakeSseServer::Mode::Silent, {});
    useEndpoint(silent.url(), std::nullopt, 2);
    QElapsedTimer t;
    t.start();
    expectFailureKeepsText("did not answer within 2 seconds");
    QVERIFY(t.elapsed() < 20000);
}

void TestRemote::stallMidStreamKeepsText() {
    FakeSseServer stalling(FakeSseServer::Mode::StallAfterChunks, {contentChunk("Once upon"), contentChunk(" a time")});
    useEndpoint(stalling.url(), std::nullopt, 2);
    expectFailureKeepsText("sent nothing for 2 seconds");
    const MessageRow* reply = app_->lastReply();
    QCOMPARE(reply->text, QStringLiteral("Once upon a time"));
    QCOMPARE(app_->storedText(reply->id), QStringLiteral("Once upon a time"));
    // What went out: a streaming chat request for the chosen model, without a key (none set here).
    QVERIFY(stalling.lastRequest().startsWith("POST /v1/chat/completions"));
    QVERIFY(stalling.lastRequest().contains("\"stream\":true"));
    QVERIFY(!stalling.lastRequest().contains("Authorization"));
}

void TestRemote::reasoningContentIsThinking() {
    FakeSseServer thinker(FakeSseServer::Mode::Complete,
                          {reasoningChunk("The user asks"), reasoningChunk(" for 2+2."), contentChunk("It is 4.")});
    useEndpoint(thinker.url(), std::nullopt, 5);
    QVERIFY(app_->sendAndWait("What is 2+2?", 30000));
    const MessageRow* reply = app_->lastReply();
    QCOMPARE(reply->reasoning, QStringLiteral("The user asks for 2+2."));
    QCOMPARE(reply->answer, QStringLiteral("It is 4."));
    QVERIFY(!reply->reasoningOpen);
}

void TestRemote::cliGenerateRemote() {
    QProcess cli;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("HEARTH_TEST_KEY", kKey);
    cli.setProcessEnvironment(env);
    cli.start(cliExe(),
              {"generate", "--remote", hearthUrl_, "--remote-model", "SmolLM2", "--api-key-env", "HEARTH_TEST_KEY",
               "--prompt", "Name a color.", "--max-tokens", "12", "--temp", "0"});
    QVERIFY(cli.waitForFinished(120000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    QVERIFY(!cli.readAllStandardOutput().trimmed().isEmpty());
    // Without the key: the server's 401 in plain words, exit 1.
    cli.start(cliExe(), {"generate", "--remote", hearthUrl_, "--remote-model", "SmolLM2", "--prompt", "Hi"});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 1);
    QVERIFY(cli.readAllStandardError().contains("HTTP 401"));
    // chat --remote: two turns from standard input, the second sent with the first reply.
    cli.start(cliExe(),
              {"chat", "--remote", hearthUrl_, "--remote-model", "SmolLM2", "--api-key-env", "HEARTH_TEST_KEY",
               "--max-tokens", "8", "--temp", "0"});
    cli.write("Hello\nAnd again\n/exit\n");
    cli.closeWriteChannel();
    QVERIFY(cli.waitForFinished(120000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    QVERIFY(cli.readAllStandardOutput().count('\n') >= 2);  // a line (at least) per reply
    cli.start(cliExe(), {"generate", "--remote", hearthUrl_, "--prompt", "Hi"});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 2);  // a usage error: no --remote-model
}

void TestRemote::llamaServer() {
    QProcess print;
    print.start("bash", {sourceDir() + "/packaging/scripts/build-llama-tools.sh", "--print"});
    print.waitForFinished(30000);
    const QString bin = QString::fromUtf8(print.readAllStandardOutput()).trimmed() + "/llama-server";
    if (print.exitCode() != 0 || !QFileInfo(bin).isExecutable()) {
        // The test command builds it (test.sh's "llama.cpp tools" stage): in CI its absence is a failure.
        if (qgetenv("CI") == "true")
            QFAIL("llama.cpp's llama-server is not built: run packaging/scripts/build-llama-tools.sh");
        QSKIP(
            "llama.cpp's llama-server is not built on this host: packaging/scripts/build-llama-tools.sh builds it "
            "(the test command does, once) and this case then runs");
    }
    ServerProcess llama;
    const int port = freePort();
    llama.process.start(bin,
                        {"-m", modelFile(kModel), "--host", "127.0.0.1", "--port", QString::number(port), "-t", "2",
                         "-c", "2048", "--api-key", kKey});
    QVERIFY(llama.process.waitForStarted(10000));
    QVERIFY2(llama.waitFor(QRegularExpression("listening on http|server is listening")),
             llama.err.right(2000).constData());
    useEndpoint(QStringLiteral("http://127.0.0.1:%1").arg(port), kKey);
    app_->conversations->newConversation();
    QSignalSpy text(app_->engines.get(), &ReplyEngine::textReady);
    QVERIFY(app_->sendAndWait("What is the capital of France?"));
    QVERIFY2(!app_->lastReply()->text.isEmpty(), qPrintable(app_->lastNotice()));
    QVERIFY(text.size() > 1);
    // Stop mid-reply, then regenerate: the same as on Hearth's server.
    ChatSettings s = app_->chatSettings->conversationSettings();
    s.maxTokens = 400;
    app_->chatSettings->setConversationSettings(s);
    QSignalSpy finished(app_->replies.get(), &ReplyController::replyFinished);
    QVERIFY(app_->replies->send("Write a long story about a dragon."));
    QVERIFY(text.wait(60000));
    app_->replies->stop();
    QTRY_VERIFY_WITH_TIMEOUT(!app_->replies->generating(), 30000);
    QCOMPARE(finished.last().first().value<ReplyStats>().finishReason, QStringLiteral("cancelled"));
    QVERIFY(!app_->lastReply()->text.isEmpty());
    s.maxTokens = 24;
    app_->chatSettings->setConversationSettings(s);
    app_->replies->regenerate();
    QTRY_VERIFY_WITH_TIMEOUT(!app_->replies->generating(), 120000);
    QCOMPARE(app_->lastReply()->siblingCount, 2);
    llama.err += llama.process.readAllStandardError();
    QVERIFY(!llama.err.contains(kKey.toUtf8()));
}

// The key went out (the server answered) but never into a file or a log line.
void TestRemote::cleanupTestCase() {
    if (!app_) return;
    app_.reset();
    qInstallMessageHandler(nullptr);
    log_.close();
    hearth_.err += hearth_.process.readAllStandardError();
    QVERIFY(!hearth_.err.contains(kKey.toUtf8()));
    for (const QString name : {"settings.ini", "chats.sqlite", "chats.sqlite-wal", "hearth.log"}) {
        QFile f(dir_.filePath(name));
        if (!f.exists()) continue;
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY2(!f.readAll().contains(kKey.toUtf8()), qPrintable(name + " holds the API key"));
    }
    QFile settings(dir_.filePath("settings.ini"));
    QVERIFY(settings.open(QIODevice::ReadOnly));
    QVERIFY(settings.readAll().contains("remote"));  // the settings were written (so the check above means something)
}

// Inside a private keychain session when the programs for one exist (with_keyring.sh).
int main(int argc, char** argv) {
    if (!qEnvironmentVariableIsSet("HEARTH_IN_KEYRING") &&
        !QStandardPaths::findExecutable("dbus-run-session").isEmpty() &&
        !QStandardPaths::findExecutable("gnome-keyring-daemon").isEmpty()) {
        const QByteArray script = qgetenv("HEARTH_SOURCE_DIR") + "/tests/server/with_keyring.sh";
        std::vector<char*> args{const_cast<char*>("bash"), const_cast<char*>(script.constData())};
        for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
        args.push_back(nullptr);
        execvp("bash", args.data());
        perror("exec with_keyring.sh");
    }
    QCoreApplication app(argc, argv);
    TestRemote test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_remote.moc"
