// Store fault injection: the disk filling up during a message commit and during a KV save (a
// write-budget VFS, test_store_faults_vfs.cpp; and, where mount is allowed, hearth-cli on a full
// tmpfs), the database file made read-only or deleted while running, the WAL cut short after a
// crash. Each: a clear error (printed as "FAULT | ..." for the report) and every committed message kept.
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QJsonArray>
#include <QTemporaryDir>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "tests/app/store/store_test_util.h"
#include "tests/support/cli_runner.h"

namespace hearth::test {
void installFaultVfs();
void setWriteBudget(int64_t bytes);  // -1: no limit
int64_t refusedWrites();
}  // namespace hearth::test

using namespace hearth;
using namespace hearth::test;
namespace fs = std::filesystem;

namespace {

// The texts of a conversation's active branch, read by a fresh store object (a fresh connection).
QStringList texts(const std::string& path, int64_t conversationId) {
    auto store = ConversationStore::open(path);
    if (!store) return {"open failed: " + QString::fromStdString(store.error().message)};
    auto branch = (*store)->activeBranch(conversationId);
    QStringList out;
    if (branch)
        for (const Message& m : *branch) out << QString::fromStdString(m.text);
    return out;
}

QString integrity(const std::string& path) {
    sqlite3* db = nullptr;
    QString result = "cannot open";
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            result = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return result;
}

void report(const char* fault, const std::string& seen) { qInfo("FAULT | %s | %s", fault, seen.c_str()); }

}  // namespace

class TestStoreFaults : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model_;

    std::string dbPath(const char* name) const { return (dir_.path() + "/" + name).toStdString(); }

private slots:
    void initTestCase() {
        installFaultVfs();  // before any database is opened: it is the default VFS from here on
        model_ = writeTinyModel(dir_.path(), 1);
        QVERIFY(!model_.empty());
    }
    void cleanup() { setWriteBudget(-1); }

    void diskFullDuringMessageCommit() {
        const std::string path = dbPath("full-message.db");
        auto store = ConversationStore::open(path);
        QVERIFY(store);
        auto c = (*store)->createConversation("chat");
        auto u = (*store)->appendMessage(c->id, 0, ChatRole::User, "first question");
        auto a = (*store)->appendMessage(c->id, u->id, ChatRole::Assistant, "first answer");
        auto streaming = (*store)->appendMessage(c->id, a->id, ChatRole::User, "second question");
        QVERIFY(c && u && a && streaming);
        setWriteBudget(0);
        auto lost = (*store)->appendMessage(c->id, streaming->id, ChatRole::Assistant, "does not fit");
        QVERIFY(!lost);
        QVERIFY2(lost.error().message.find("The disk is full") != std::string::npos, lost.error().message.c_str());
        report("disk full during a message commit (store API)", lost.error().message);
        QVERIFY(refusedWrites() > 0);
        setWriteBudget(-1);
        // Space is back: the same store goes on, and nothing committed was lost.
        QVERIFY((*store)->appendMessage(c->id, streaming->id, ChatRole::Assistant, "second answer"));
        QCOMPARE(texts(path, c->id),
                 (QStringList{"first question", "first answer", "second question", "second answer"}));
        QCOMPARE(integrity(path), QString("ok"));
    }

    void diskFullDuringKvSave() {
        const std::string path = dbPath("full-kv.db");
        auto store = ConversationStore::open(path);
        auto engine = loadTiny(model_);
        QVERIFY(store && engine);
        auto c = (*store)->createConversation("chat");
        auto u = (*store)->appendMessage(c->id, 0, ChatRole::User, "tell me");
        const std::vector<TokenId> prompt = tinyPrompt(3, 40);
        const GenerateResult reply = greedy(*engine, prompt, 24);
        auto a = (*store)->appendMessage(c->id, u->id, ChatRole::Assistant, "the reply");
        QVERIFY(u && a && reply.tokens.size() == 24);
        const std::vector<TokenId> tokens = concat(prompt, reply.tokens);
        // Room for one 16 KiB page: the disk fills in the middle of the KV transaction.
        setWriteBudget(20000);
        auto saved = saveKv(*engine, (*store)->kv(), c->id, tokens);
        QVERIFY(!saved);
        QVERIFY2(saved.error().message.find("The disk is full") != std::string::npos, saved.error().message.c_str());
        report("disk full during a KV save (store API)", saved.error().message);
        setWriteBudget(-1);
        QCOMPARE(*(*store)->kv().blockCount(), int64_t{0});  // the KV transaction was rolled back whole
        QCOMPARE(texts(path, c->id), (QStringList{"tell me", "the reply"}));
        // The next save works, and what it saved restores.
        auto again = saveKv(*engine, (*store)->kv(), c->id, tokens);
        QVERIFY(again && *again > 0);
        auto fresh = loadTiny(model_);
        auto restored = restoreKv(*fresh, (*store)->kv(), c->id, concat(tokens, std::vector<TokenId>{5}));
        QVERIFY(restored && restored->restoredTokens >= 48);
        QCOMPARE(integrity(path), QString("ok"));
    }

    void diskFullTmpfsCli() {
        // A real full file system, for hearth-cli: needs mount (root in a VM or a privileged container).
        const QString mnt = dir_.path() + "/tmpfs";
        fs::create_directories(mnt.toStdString());
        if (mount("tmpfs", mnt.toUtf8().constData(), "tmpfs", 0, "size=2m") != 0)
            QSKIP("cannot mount a tmpfs here (not root or no CAP_SYS_ADMIN); the VFS tests above cover the store");
        struct Unmount {
            QByteArray at;
            ~Unmount() { umount2(at.constData(), MNT_DETACH); }
        } unmount{mnt.toUtf8()};
        const QString db = mnt + "/chat.db";
        const auto turn = [&](const char* prompt) {
            return runCli({"generate", "--db", db, "--model", QString::fromStdString(model_), "--conversation", "c",
                           "--prompt", prompt, "--temp", "0", "--max-tokens", "8", "--logit-bias", "2=-inf"});
        };
        const CliRun first = turn("the cat");
        QVERIFY2(first.exitCode == 0, first.err.constData());
        const auto fill = [&](const char* name, size_t limit) {
            std::ofstream filler((mnt + "/" + name).toStdString(), std::ios::binary);
            const std::string block(4096, 'x');
            for (size_t n = 0; n < limit && filler.write(block.data(), block.size()); n += block.size()) {}
        };
        // Full but for 40 KiB: enough to open (the 32 KiB -shm), not for a commit's WAL frames.
        fill("reserve", 40 << 10);
        fill("filler", SIZE_MAX);
        fs::remove((mnt + "/reserve").toStdString());
        const CliRun second = turn("a cat");
        fs::remove((mnt + "/filler").toStdString());
        const CliRun after = runCli({"conversations", "--db", db, "--json"});
        QVERIFY(!second.crashed && second.exitCode != 0);
        QVERIFY2(second.err.contains("disk is full"), second.err.constData());
        report("disk full (real tmpfs, 40 KiB left) during hearth-cli generate --db",
               second.err.trimmed().toStdString());
        // Space freed: the first turn's messages are all there, nothing of the failed one.
        const QJsonArray all = QJsonDocument::fromJson(after.out).array();
        QVERIFY2(all.size() == 1 && all[0].toObject()["messages"].toInt() == 2, after.out.constData());
    }

    void damagedRowsFoundByFuzzing();
    void readOnlyWhileRunning();
    void deletedWhileRunning();
    void walCutAfterCrash();
};

// Made read-only under a running store: Linux checks permissions when a file is opened, so the
// running store goes on writing; the next process to open it cannot write and says so. As root
// (permissions do not bind root) that next process runs as the user nobody.
void TestStoreFaults::readOnlyWhileRunning() {
    const std::string path = dbPath("readonly.db");
    auto store = ConversationStore::open(path);
    auto c = (*store)->createConversation("chat");
    auto u = (*store)->appendMessage(c->id, 0, ChatRole::User, "kept 1");
    QVERIFY(u && (*store)->appendMessage(c->id, u->id, ChatRole::Assistant, "kept 2"));
    fs::permissions(dir_.path().toStdString(), fs::perms(0755));
    fs::permissions(path, fs::perms(0444));
    auto running = (*store)->appendMessage(c->id, 0, ChatRole::User, "written by the running store");
    QVERIFY(running);
    int pipeFds[2];
    QVERIFY(pipe(pipeFds) == 0);
    const pid_t pid = fork();
    if (pid == 0) {
        close(pipeFds[0]);
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);  // nobody
        auto other = ConversationStore::open(path);
        std::string seen = other ? "" : other.error().message;
        if (other) {
            auto w = (*other)->appendMessage(c->id, running->id, ChatRole::Assistant, "cannot be written");
            seen = w ? "WRITTEN" : w.error().message;
        }
        (void)!write(pipeFds[1], seen.data(), seen.size());
        _exit(0);
    }
    close(pipeFds[1]);
    std::string seen;
    char buf[512];
    for (ssize_t n; (n = read(pipeFds[0], buf, sizeof buf)) > 0;) seen.append(buf, static_cast<size_t>(n));
    close(pipeFds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    QVERIFY2(
        seen != "WRITTEN" &&
            (seen.find("cannot be written") != std::string::npos || seen.find("can be written") != std::string::npos),
        seen.c_str());
    report("database file made read-only, next open (another process)", seen);
    fs::permissions(path, fs::perms(0644));
    store->reset();
    QCOMPARE(texts(path, c->id), (QStringList{"written by the running store"}));  // the active branch
    auto reopened = ConversationStore::open(path);
    QVERIFY(reopened);
    QCOMPARE(int((*reopened)->branchTo(u->id + 1)->size()), 2);  // kept 1, kept 2
    QCOMPARE(integrity(path), QString("ok"));
}

// Deleted under a running store: SQLite refuses to write to a file that no longer has a name
// (SQLITE_READONLY_DBMOVED), so nothing more is written into a file that will vanish; what
// was committed can still be read by the running store and saved elsewhere.
void TestStoreFaults::deletedWhileRunning() {
    const std::string path = dbPath("deleted.db");
    auto store = ConversationStore::open(path);
    auto c = (*store)->createConversation("chat");
    auto u = (*store)->appendMessage(c->id, 0, ChatRole::User, "kept 1");
    QVERIFY(u && (*store)->appendMessage(c->id, u->id, ChatRole::Assistant, "kept 2"));
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
    auto lost = (*store)->appendMessage(c->id, u->id + 1, ChatRole::User, "nowhere to go");
    QVERIFY(!lost);
    QVERIFY2(lost.error().message.find("moved or deleted") != std::string::npos, lost.error().message.c_str());
    report("database file deleted while running", lost.error().message);
    auto branch = (*store)->activeBranch(c->id);
    QVERIFY(branch && branch->size() == 2 && branch->back().text == "kept 2");
    const std::string rescue = dbPath("rescued.db");  // what the app can still save elsewhere
    auto saved = (*store)->saveCopy(rescue);
    QVERIFY2(saved, saved ? "" : saved.error().message.c_str());
    QCOMPARE(texts(rescue, c->id), (QStringList{"kept 1", "kept 2"}));
    QCOMPARE(integrity(rescue), QString("ok"));
}

// A crash with commits still in the WAL, then the WAL cut at several lengths (as a file system
// can leave it): the database opens, passes integrity_check, keeps every message checkpointed
// into the main file and, of the later ones, exactly a prefix, each message whole.
void TestStoreFaults::walCutAfterCrash() {
    const std::string path = dbPath("crash.db");
    const pid_t pid = fork();
    if (pid == 0) {
        auto store = ConversationStore::open(path);
        if (!store) _exit(3);
        auto c = (*store)->createConversation("chat");
        int64_t parent = 0;
        for (int i = 0; i < 8; ++i) {
            if (i == 4 && !(*store)->kv().reclaim()) _exit(4);  // checkpoint: 0..3 in the main file
            auto m = (*store)->appendMessage(c->id, parent, ChatRole::User, "message " + std::to_string(i));
            if (!m) _exit(5);
            parent = m->id;
        }
        std::raise(SIGKILL);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    QVERIFY(WIFSIGNALED(status));
    const uintmax_t walSize = fs::file_size(path + "-wal");
    QVERIFY(walSize > 32);
    for (const uintmax_t cut :
         {uintmax_t{0}, uintmax_t{31}, uintmax_t{32}, walSize / 3, walSize / 2, walSize - 1, walSize}) {
        const std::string copy = dbPath("crash-copy.db");
        for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(copy + suffix);
        fs::copy_file(path, copy);
        fs::copy_file(path + "-wal", copy + "-wal");
        fs::resize_file(copy + "-wal", cut);
        const QStringList got = texts(copy, 1);
        QVERIFY2(got.size() >= 4, qPrintable(got.join(", ")));
        for (int i = 0; i < got.size(); ++i) QCOMPARE(got[i], QString("message %1").arg(i));
        QCOMPARE(integrity(copy), QString("ok"));
        auto store = ConversationStore::open(copy);
        QVERIFY(store && (*store)->appendMessage(1, 0, ChatRole::User, "after the crash"));
        report(qPrintable(QString("WAL of %1 bytes cut to %2 after a crash").arg(walSize).arg(cut)),
               qPrintable(
                   QString("opened without a message; %1 of 8 messages kept (4 were checkpointed)").arg(got.size())));
    }
}

// The fuzz_store findings (fuzz/regressions/store), in the g++ and ASan trees too: a cycle of
// parents made reading a branch and switching to one endless; a tokens blob shorter than one
// id (or an empty key) was a null pointer given to memcpy. Now: a clear error, and no report.
void TestStoreFaults::damagedRowsFoundByFuzzing() {
    const std::string path = dbPath("damaged-rows.db");
    int64_t conversationId = 0;
    std::vector<TokenId> tokens;
    {
        auto store = ConversationStore::open(path);
        auto engine = loadTiny(model_);
        QVERIFY(store && engine);
        conversationId = (*store)->createConversation("chat")->id;
        int64_t parent = 0;
        for (const char* text : {"one", "two", "three", "four"})
            parent = (*store)->appendMessage(conversationId, parent, ChatRole::User, text)->id;
        tokens = concat(tinyPrompt(5, 40), greedy(*engine, tinyPrompt(5, 40), 8).tokens);
        QVERIFY(saveKv(*engine, (*store)->kv(), conversationId, tokens));
    }
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* damage =
        "UPDATE messages SET parent_id = 4 WHERE id = 1;"
        "UPDATE kv_blocks SET tokens = x'010000' WHERE position = 0;"
        "UPDATE kv_blocks SET parent_key = x'' WHERE position = 16;";
    QCOMPARE(sqlite3_exec(db, damage, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    auto store = ConversationStore::open(path);
    QVERIFY(store);
    auto branch = (*store)->activeBranch(conversationId);
    QVERIFY(!branch);
    QVERIFY2(branch.error().message.find("do not form a chain") != std::string::npos, branch.error().message.c_str());
    report("a cycle of parent messages in the database (fuzzing)", branch.error().message);
    QVERIFY((*store)->switchBranch(2));  // ends
    auto engine = loadTiny(model_);
    auto restored = restoreKv(*engine, (*store)->kv(), conversationId, concat(tokens, std::vector<TokenId>{5}));
    QVERIFY(restored && restored->restoredTokens == 0 && !restored->refusal.empty());
    report("a KV block row with 3 bytes of tokens (fuzzing)", restored->refusal);
}

QTEST_GUILESS_MAIN(TestStoreFaults)
#include "test_store_faults.moc"
