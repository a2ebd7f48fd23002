// hearth-cli chat as a person uses it, driving the real binary with SmolLM2 through a pipe:
// slash commands never reach the model (/help lists them), a reply cut at the token limit says
// so and /more continues it, tokens/s after each reply, conversations kept by default in the
// window's database (XDG_DATA_HOME here) and --no-db keeping nothing, and Ctrl-C (SIGINT): during
// a reply it stops the reply, which stays in the database marked stopped; at the prompt it quits
// cleanly.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>

#include "app/store/conversation_store.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

const QString kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
// SmolLM2's <|endoftext|> and <|im_end|> banned: replies run until the limit or Ctrl-C.
const QStringList kEndless = {"--temp", "0", "--logit-bias", "0=-inf", "--logit-bias", "2=-inf"};

struct Chat {
    QProcess process;
    QByteArray out, err;
    void start(const QStringList& args, const QString& dataHome) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_DATA_HOME", dataHome);
        process.setProcessEnvironment(env);
        process.start(cliExe(), QStringList{"chat", "--model", modelFile(kModel)} + args);
        process.waitForStarted();
    }
    // SIGINT to the chat itself; never to pid 0 (the caller's whole process group).
    bool interrupt() {
        const auto pid = static_cast<pid_t>(process.processId());
        return pid > 0 && process.state() == QProcess::Running && ::kill(pid, SIGINT) == 0;
    }
    void read() {
        out += process.readAllStandardOutput();
        err += process.readAllStandardError();
    }
    // Waits until stderr (or stdout) holds text `count` times.
    bool waitFor(const QByteArray& text, bool onStdout = false, qsizetype count = 1, int ms = 120000) {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < ms) {
            read();
            if ((onStdout ? out : err).count(text) >= count) return true;
            if (process.state() != QProcess::Running) return false;
            process.waitForReadyRead(100);
        }
        return false;
    }
    bool finish(int ms = 60000) {
        const bool done = process.waitForFinished(ms);
        read();
        return done && process.exitStatus() == QProcess::NormalExit;
    }
};

std::vector<Message> onlyConversation(const QString& dbPath) {
    auto store = ConversationStore::open(dbPath.toStdString());
    if (!store) return {};
    auto all = (*store)->listConversations();
    if (!all || all->size() != 1) return {};
    auto branch = (*store)->activeBranch(all->front().id);
    return branch ? *branch : std::vector<Message>{};
}

}  // namespace

class TestCliChat : public QObject {
    Q_OBJECT
private slots:
    void init() { HEARTH_REQUIRE_FILE(modelFile(kModel)); }
    void commandsNeverReachTheModel();
    void tokenLimitMoreAndTheDefaultDatabase();
    void ctrlCStopsTheReplyThenQuits();
};

void TestCliChat::commandsNeverReachTheModel() {
    QTemporaryDir home;
    Chat c;
    c.start({"--no-db"}, home.path());
    c.process.write("/help\n/frobnicate\n/more\n/exit\n");
    c.process.closeWriteChannel();
    QVERIFY(c.finish());
    QCOMPARE(c.process.exitCode(), 0);
    QVERIFY2(c.out.trimmed().isEmpty(), c.out.constData());  // nothing was sent to the model
    for (const char* listed : {"/help", "/more", "/reset", "/exit", "Ctrl-C"}) QVERIFY2(c.err.contains(listed), listed);
    QVERIFY(c.err.contains("unknown command /frobnicate; /help lists the commands"));
    QVERIFY(c.err.contains("there is no reply to continue"));
    QVERIFY(c.err.contains("Chatting with SmolLM2-135M-Instruct ("));  // the readable name
    QVERIFY(c.err.contains("not saved (--no-db)") && c.err.contains("Bye (nothing was saved: --no-db)."));
    QVERIFY(!QFileInfo::exists(home.path() + "/hearth/conversations.sqlite"));
    // With the database, a chat left before its first message leaves no empty conversation.
    Chat stored;
    stored.start({}, home.path());
    stored.process.write("/help\n/exit\n");
    stored.process.closeWriteChannel();
    QVERIFY(stored.finish());
    QVERIFY2(stored.err.contains("Bye (nothing to save)."), stored.err.constData());
    auto store = ConversationStore::open((home.path() + "/hearth/conversations.sqlite").toStdString());
    QVERIFY(store);
    QCOMPARE((*store)->listConversations()->size(), size_t{0});
}

void TestCliChat::tokenLimitMoreAndTheDefaultDatabase() {
    QTemporaryDir home;
    Chat c;
    c.start(kEndless + QStringList{"--max-tokens", "12"}, home.path());
    c.process.write("Tell me a story about a cat.\n/more\n");
    c.process.closeWriteChannel();
    QVERIFY(c.finish(300000));
    QCOMPARE(c.process.exitCode(), 0);
    QCOMPARE(c.err.count("[reply stopped at the 12-token limit; /more or --max-tokens N]"), 2);
    QCOMPARE(c.err.count(" tokens/s; first token after "), 2);
    QVERIFY2(c.err.contains("[12 tokens, "), c.err.constData());
    const QString db = home.path() + "/hearth/conversations.sqlite";  // the window's default (paths.h)
    QVERIFY2(c.err.contains(db.toUtf8()), c.err.constData());
    const std::vector<Message> branch = onlyConversation(db);
    QCOMPARE(branch.size(), size_t{2});  // /more continued the reply in place
    QCOMPARE(branch[0].text, std::string("Tell me a story about a cat."));
    const QString shown = QString::fromUtf8(c.out);
    const QString stored = QString::fromStdString(branch[1].text);
    QVERIFY(branch[1].complete);
    QCOMPARE(branch[1].stats.finishReason, std::string("length"));
    QCOMPARE(branch[1].stats.generatedTokens, 12);  // the continuation's
    // The reply as printed (two pieces, each ended by a newline) is the stored text.
    QCOMPARE(QString(shown).remove('\n'), QString(stored).remove('\n'));
    QVERIFY(stored.size() > 20);
    // `conversations` without --db reads the same database.
    QProcess list;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_DATA_HOME", home.path());
    list.setProcessEnvironment(env);
    list.start(cliExe(), {"conversations", "--json"});
    QVERIFY(list.waitForFinished(60000));
    const QJsonArray all = QJsonDocument::fromJson(list.readAllStandardOutput()).array();
    QCOMPARE(all.size(), 1);
    QCOMPARE(all[0].toObject()["messages"].toInt(), 2);
    QCOMPARE(all[0].toObject()["title"].toString(), QString("Tell me a story about a cat."));  // as the window titles
}

void TestCliChat::ctrlCStopsTheReplyThenQuits() {
    QTemporaryDir home;
    const QString db = home.filePath("chat.db");
    Chat c;
    c.start(kEndless + QStringList{"--max-tokens", "4000", "--db", db}, home.path());
    QVERIFY(c.waitFor("Ctrl-D quits"));
    c.process.write("Write a very long story about a lighthouse keeper.\n");
    QVERIFY2(c.waitFor(" ", true), c.err.constData());  // the reply is streaming
    QTest::qWait(300);  // a few more tokens
    QVERIFY(c.interrupt());
    QVERIFY2(c.waitFor("[stopped; the partial reply is kept]"), c.err.constData());
    QVERIFY(c.waitFor("tokens/s"));
    QVERIFY(c.waitFor("\n> ", false, 2));  // back at the prompt, still running
    QCOMPARE(c.process.state(), QProcess::Running);
    QVERIFY(c.interrupt());  // at the prompt: quit
    QVERIFY(c.finish());
    QCOMPARE(c.process.exitCode(), 0);
    QVERIFY2(c.err.contains("Bye: conversation 1 saved in " + db.toUtf8() + "."), c.err.constData());
    const std::vector<Message> branch = onlyConversation(db);
    QCOMPARE(branch.size(), size_t{2});
    QVERIFY(branch[1].complete);
    QCOMPARE(branch[1].stats.finishReason, std::string("cancelled"));  // the window shows it stopped
    QVERIFY(branch[1].stats.generatedTokens > 0 && branch[1].stats.generatedTokens < 4000);
    QCOMPARE(QString::fromUtf8(c.out).trimmed(), QString::fromStdString(branch[1].text).trimmed());
    qInfo("stopped after %d tokens: %s", branch[1].stats.generatedTokens, c.out.left(80).constData());
}

QTEST_MAIN(TestCliChat)
#include "test_cli_chat.moc"
