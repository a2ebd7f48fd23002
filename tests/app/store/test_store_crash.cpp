// Crash safety: hearth-cli generate --db SIGKILLed at named points (message commit, KV
// transaction, a WAL write) and at random moments (seed printed), 57 kills; then integrity_check,
// every committed message present, and each restore either correct or refused.
#include <QProcess>
#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <map>
#include <set>

#include "app/store/sqlite_db.h"
#include "tests/app/store/store_test_util.h"
#include "tests/support/cli_runner.h"

using namespace hearth;
using namespace hearth::test;

class TestStoreCrash : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString model_, db_;
    std::map<int64_t, std::string> committed_;  // complete messages seen so far
    int runMs_ = 100;
    int restoresChecked_ = 0;
    std::set<int>
        seeded_;  // checks whose turn restored some KV                            // how long one uninterrupted run takes

    QStringList args(int conv, const QString& prompt, bool restore = true) const {
        QStringList a{"generate",
                      "--db",
                      db_,
                      "--model",
                      model_,
                      "--conversation",
                      QString("c%1").arg(conv),
                      "--prompt",
                      prompt,
                      "--temp",
                      "0",
                      "--max-tokens",
                      "12",
                      "--logit-bias",
                      "2=-inf",
                      "--json"};
        if (!restore) a << "--no-kv-restore";
        return a;
    }

    // Runs the CLI with HEARTH_KILL_POINT=point, or kills it after delayMs when point is empty.
    bool runKilled(const QStringList& a, const QString& point, int delayMs) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        if (!point.isEmpty()) env.insert("HEARTH_KILL_POINT", point);
        p.setProcessEnvironment(env);
        p.start(cliExe(), a);
        if (!p.waitForStarted()) return false;
        QElapsedTimer t;
        t.start();
        if (point.isEmpty()) {
            if (!p.waitForFinished(delayMs)) p.kill();
        }
        p.waitForFinished(60000);
        const bool killed = p.exitStatus() == QProcess::CrashExit;
        // A run that finished first says how long runs take now (the machine's load changes):
        // the next random moments are drawn inside that.
        if (!killed && point.isEmpty()) runMs_ = static_cast<int>(t.elapsed());
        return killed;
    }

    // integrity_check, and every complete message seen before is there with its text.
    void checkDatabase(const char* after) {
        auto db = SqliteDb::open(db_.toStdString());
        QVERIFY(db);
        auto st = (*db)->prepare("PRAGMA integrity_check");
        QVERIFY(st && st->step().value_or(false));
        QVERIFY2(st->text(0) == "ok", after);
        for (const auto& [id, text] : committed_) {
            auto m = (*db)->prepare("SELECT text FROM messages WHERE id = ?");
            m->bind(1, id);
            QVERIFY2(m->step().value_or(false) && m->text(0) == text, after);
        }
        auto all = (*db)->prepare("SELECT id, text FROM messages WHERE complete = 1");
        while (all->step().value_or(false)) committed_[all->int64(0)] = all->text(1);
    }

    // A completed turn long enough to save (or share) whole KV blocks, for the kills to interrupt.
    void seedConversation(int conv) {
        const CliRun r = runCli(args(conv, "the cat at the cat at a the cat a cat at the"));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        checkDatabase("a completed turn");
    }

    // A turn with restore and the same turn recomputed in a copy of the database: same reply.
    void checkRestore(int conv, int round) {
        const QString copy = dir_.path() + QString("/copy%1.db").arg(round);
        {
            auto db = SqliteDb::open(db_.toStdString());
            QVERIFY((*db)->exec("VACUUM INTO '" + copy.toStdString() + "'"));
        }
        const QString prompt = QString("the cat %1").arg(round);
        const CliRun restored = runCli(args(conv, prompt));
        QVERIFY2(restored.exitCode == 0, restored.err.constData());
        const QString saved = db_;
        db_ = copy;
        const CliRun recomputed = runCli(args(conv, prompt, false));
        db_ = saved;
        QVERIFY2(recomputed.exitCode == 0, recomputed.err.constData());
        QCOMPARE(restored.json()["prompt_tokens"], recomputed.json()["prompt_tokens"]);
        QCOMPARE(restored.json()["tokens"], recomputed.json()["tokens"]);
        if (restored.json()["timings"].toObject()["kv_restored_tokens"].toInt() > 0) ++restoresChecked_;
        checkDatabase("after a restore check");
    }

private slots:
    void initTestCase() {
        model_ = QString::fromStdString(writeTinyModel(dir_.path(), 1));
        db_ = dir_.path() + "/crash.db";
        QElapsedTimer t;
        t.start();
        QCOMPARE(runCli(args(0, "the cat at")).exitCode, 0);
        runMs_ = static_cast<int>(t.elapsed());
        checkDatabase("the first turn");
    }

    void namedKillPoints() {
        const QStringList points{"message-commit:1", "message-commit:2", "kv-transaction", "kv-commit",
                                 "wal-write:1",      "wal-write:3",      "wal-write:6",    "wal-write:12"};
        int kills = 0;
        for (int round = 0; round < 4; ++round) {
            seedConversation(round);
            for (const QString& point : points) {
                const bool killed = runKilled(args(round, QString("a cat %1").arg(kills)), point, 0);
                QVERIFY2(killed, qPrintable("not killed at " + point));
                ++kills;
                checkDatabase(qPrintable("a kill at " + point));
            }
            checkRestore(round, round);
        }
        qInfo("%d kills at named points; %d of 4 checks restored KV", kills, restoresChecked_);
        QVERIFY(restoresChecked_ > 0);
    }

    void randomKills() {
        const quint32 seed = qEnvironmentVariableIsSet("HEARTH_CRASH_SEED")
            ? qEnvironmentVariableIntValue("HEARTH_CRASH_SEED")
            : QRandomGenerator::global()->generate();
        qInfo("random kill seed %u (HEARTH_CRASH_SEED=%u reproduces it)", seed, seed);
        QRandomGenerator rng(seed);
        int kills = 0, runs = 0;
        for (; kills < 25 && runs < 300; ++runs) {
            if (kills % 10 == 0 && seeded_.insert(10 + kills / 10).second) seedConversation(10 + kills / 10);
            const int delay = rng.bounded(1, std::max(2, runMs_ * 2 / 3));  // somewhere inside a run
            if (runKilled(args(10 + kills / 10, QString("the a %1").arg(runs)), {}, delay)) {
                ++kills;
                if (kills % 10 == 0) checkRestore(10 + kills / 10 - 1, 100 + kills);
            }
            checkDatabase(qPrintable(QString("a kill after %1 ms").arg(delay)));
        }
        qInfo("%d of %d runs killed at random moments (a run takes about %d ms)", kills, runs, runMs_);
        QCOMPARE(kills, 25);  // with the 32 named kills, 57 in all
        QVERIFY(restoresChecked_ > 4);  // the checks after random kills restored KV too
    }
};

QTEST_GUILESS_MAIN(TestStoreCrash)
#include "test_store_crash.moc"
