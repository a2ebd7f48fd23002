// hearth-cli's store commands on a tiny model: generate --db (restored + cached + computed =
// prompt), --no-kv-restore gives the same reply, conversations list/show/export/delete, a
// refusal printed with its reason, and a damaged database named with the way forward.
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <fstream>

#include "tests/app/store/store_test_util.h"
#include "tests/support/cli_runner.h"

using namespace hearth;
using namespace hearth::test;

class TestStoreCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString model1_, model2_, db_;

    CliRun turn(const QString& model, const QString& prompt, QStringList extra = {}) {
        return runCli(QStringList{"generate", "--db", db_, "--model", model, "--conversation", "chat-a", "--prompt",
                                  prompt, "--temp", "0", "--max-tokens", "24", "--logit-bias", "2=-inf", "--json"} +
                      extra);
    }

private slots:
    void initTestCase() {
        model1_ = QString::fromStdString(writeTinyModel(dir_.path(), 1));
        model2_ = QString::fromStdString(writeTinyModel(dir_.path(), 2));
        db_ = dir_.path() + "/cli.db";
    }

    void storedTurns() {
        const CliRun first = turn(model1_, "the cat at the cat");
        QVERIFY2(first.exitCode == 0, first.err.constData());
        const QJsonObject j1 = first.json();
        QCOMPARE(j1["timings"].toObject()["kv_restored_tokens"].toInt(), 0);
        const CliRun second = turn(model1_, "a cat at a the");
        QVERIFY2(second.exitCode == 0, second.err.constData());
        const QJsonObject j2 = second.json();
        const QJsonObject t = j2["timings"].toObject();
        const int restored = t["kv_restored_tokens"].toInt();
        QVERIFY2(restored >= 16, second.out.constData());
        QCOMPARE(j2["prompt_tokens"].toArray().size(),
                 restored + t["prefix_cache_hit_tokens"].toInt() + t["prefill_tokens"].toInt());
        // The same turn recomputed (a branch from the same parent would differ; compare a fresh
        // conversation's recomputation instead: the reply to the same prompt tokens).
        const CliRun again = turn(model1_, "a cat at a the", {"--no-kv-restore"});
        QVERIFY(again.exitCode == 0);
        QCOMPARE(again.json()["timings"].toObject()["kv_restored_tokens"].toInt(), 0);

        const CliRun list = runCli({"conversations", "--db", db_, "--json"});
        QCOMPARE(list.exitCode, 0);
        const QJsonArray all = QJsonDocument::fromJson(list.out).array();
        QCOMPARE(all.size(), 1);
        QCOMPARE(all[0].toObject()["messages"].toInt(), 6);
        const CliRun md = runCli({"conversations", "--db", db_, "--export", "chat-a", "--format", "md"});
        QVERIFY(md.out.contains("## User") && md.out.contains("a cat at a the"));
        const CliRun json = runCli({"conversations", "--db", db_, "--export", "1", "--format", "json"});
        QCOMPARE(QJsonDocument::fromJson(json.out).object()["messages"].toArray().size(), 6);
        QCOMPARE(QJsonDocument::fromJson(json.out).object()["messages"].toArray()[1].toObject()["text"].toString(),
                 j1["text"].toString());
    }

    // Same prompt tokens restored vs recomputed: the same reply.
    void restoreMatchesRecompute() {
        const QString base = db_;
        db_ = dir_.path() + "/r1.db";
        QVERIFY(turn(model1_, "the cat at the cat at a the cat a cat").exitCode == 0);
        const QJsonObject restored = turn(model1_, "at the a").json();
        db_ = dir_.path() + "/r2.db";
        QVERIFY(turn(model1_, "the cat at the cat at a the cat a cat").exitCode == 0);
        const QJsonObject recomputed = turn(model1_, "at the a", {"--no-kv-restore"}).json();
        db_ = base;
        QVERIFY2(restored["timings"].toObject()["kv_restored_tokens"].toInt() > 0,
                 QJsonDocument(restored).toJson().constData());
        QCOMPARE(restored["prompt_tokens"], recomputed["prompt_tokens"]);
        QCOMPARE(restored["tokens"], recomputed["tokens"]);
    }

    void refusalIsPrinted() {
        const CliRun other = turn(model2_, "the the");
        QCOMPARE(other.exitCode, 0);
        QVERIFY2(other.err.contains("model file differs"), other.err.constData());
        QCOMPARE(other.json()["timings"].toObject()["kv_restored_tokens"].toInt(), 0);
    }

    // chat --db: each line a stored turn; continuing the conversation restores its KV.
    void chatStoresTurns() {
        const QString chatDb = dir_.path() + "/chat.db";
        auto chat = [&](const QByteArray& input, QStringList extra) {
            QProcess p;
            p.start(
                cliExe(),
                QStringList{"chat", "--db", chatDb, "--model", model1_, "--temp", "0", "--max-tokens", "16"} + extra);
            p.write(input);
            p.closeWriteChannel();
            p.waitForFinished(60000);
            return QPair<int, QByteArray>(p.exitCode(), p.readAllStandardError());
        };
        QCOMPARE(chat("the cat at the cat at a the cat a cat\n/exit\n", {}).first, 0);
        const auto second = chat("a cat at a the\n", {"--conversation", "1"});
        QCOMPARE(second.first, 0);
        QVERIFY2(second.second.contains("2 messages") && second.second.contains("restored from the database"),
                 second.second.constData());
        const QJsonArray all = QJsonDocument::fromJson(runCli({"conversations", "--db", chatDb, "--json"}).out).array();
        QCOMPARE(all.size(), 1);
        QCOMPARE(all[0].toObject()["messages"].toInt(), 4);
    }

    void deleteConversation() {
        QCOMPARE(runCli({"conversations", "--db", db_, "--delete", "chat-a"}).exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(runCli({"conversations", "--db", db_, "--json"}).out).array().size(), 0);
        QVERIFY(runCli({"conversations", "--db", db_, "--show", "chat-a"}).exitCode != 0);
    }

    void damagedDatabase() {
        const QString bad = dir_.path() + "/bad.db";
        {
            std::ofstream f(bad.toStdString(), std::ios::binary);
            for (int i = 0; i < 3000; ++i) f << "no database here ";
        }
        const CliRun r = runCli({"conversations", "--db", bad});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(!r.crashed);
        QVERIFY2(r.err.contains(bad.toUtf8()) && r.err.contains("--db") && r.err.contains("move"), r.err.constData());
        const CliRun moved = runCli({"conversations", "--db", bad, "--move-aside"});
        QCOMPARE(moved.exitCode, 0);
        QCOMPARE(runCli({"conversations", "--db", bad}).exitCode, 0);  // fresh
    }
};

QTEST_GUILESS_MAIN(TestStoreCli)
#include "test_store_cli.moc"
