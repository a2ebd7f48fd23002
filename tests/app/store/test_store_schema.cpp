// The conversation store without a model: schema pragmas, migrations from every earlier
// version, conversations, messages and branches, search, settings, damaged files.
#include <QTemporaryDir>
#include <QtTest>
#include <sqlite3.h>

#include <fstream>

#include "app/store/conversation_store.h"
#include "app/store/schema.h"
#include "app/store/sqlite_db.h"

using namespace hearth;

class TestStoreSchema : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const char* name) { return (dir_.path() + "/" + name).toStdString(); }

    static std::unique_ptr<ConversationStore> openOk(const std::string& p) {
        auto s = ConversationStore::open(p);
        if (!s) qWarning("%s", s.error().message.c_str());
        return s ? std::move(*s) : nullptr;
    }
    static int64_t pragma(const std::string& p, const char* sql) {
        auto db = SqliteDb::open(p);
        return db ? (*db)->queryInt(sql).value_or(-1) : -1;
    }

private slots:
    void pragmasOfANewDatabase() {
        const std::string p = path("new.db");
        QVERIFY(openOk(p));
        QCOMPARE(pragma(p, "PRAGMA user_version"), int64_t{kSchemaVersion});
        QCOMPARE(pragma(p, "PRAGMA auto_vacuum"), int64_t{2});  // INCREMENTAL
        auto db = SqliteDb::open(p);
        auto st = (*db)->prepare("PRAGMA journal_mode");
        QVERIFY(st && st->step().value_or(false));
        QCOMPARE(QString::fromStdString(st->text(0)), QString("wal"));
    }

    // A database left at each earlier version (0 = empty file, 1 = the first schema, with
    // data) opens, migrates step by step to the current version and keeps its rows.
    void migratesFromEveryEarlierVersion() {
        for (int from = 0; from < kSchemaVersion; ++from) {
            // Appended, not "v" + ...: g++ 12 reports a false -Wrestrict there (GCC bug 105651).
            std::string name = "v";
            name += std::to_string(from);
            name += ".db";
            const std::string p = path(name.c_str());
            {
                auto db = SqliteDb::open(p);
                QVERIFY(db);
                QVERIFY(prepareSchema(**db, from));
                if (from >= 1) {
                    QVERIFY((*db)->exec(
                        "INSERT INTO conversations(id, title, created_ms, updated_ms) VALUES(7, 'old', 1, 2)"));
                    QVERIFY((*db)->exec(
                        "INSERT INTO messages(conversation_id, role, text, created_ms) VALUES(7, 'user', 'hello', 1)"));
                    // Before v4 an untitled chat was stored as "New chat"; one with messages is a real title.
                    QVERIFY((*db)->exec(
                        "INSERT INTO conversations(id, title, created_ms, updated_ms) VALUES(8, 'New chat', 1, 2)"));
                    QVERIFY((*db)->exec(
                        "INSERT INTO conversations(id, title, created_ms, updated_ms) VALUES(9, 'New chat', 1, 2)"));
                    QVERIFY(
                        (*db)->exec("INSERT INTO messages(id, conversation_id, role, text, created_ms) "
                                    "VALUES(90, 9, 'user', 'named so', 1)"));
                    QVERIFY((*db)->exec("UPDATE conversations SET active_leaf_id = 90 WHERE id = 9"));
                }
            }
            QCOMPARE(pragma(p, "PRAGMA user_version"), int64_t{from});
            auto s = openOk(p);
            QVERIFY(s);
            QCOMPARE(pragma(p, "PRAGMA user_version"), int64_t{kSchemaVersion});
            QCOMPARE(pragma(p, "SELECT count(*) FROM pragma_table_info('conversations') WHERE name = 'kv_used_ms'"),
                     int64_t{1});
            QCOMPARE(pragma(p, "SELECT count(*) FROM model_fingerprints"), int64_t{0});
            QCOMPARE(pragma(p, "SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'left_leaf_id'"),
                     int64_t{1});
            if (from >= 1) {
                auto c = s->conversation(7);
                QVERIFY(c && *c);
                QCOMPARE(QString::fromStdString((*c)->title), QString("old"));
                QCOMPARE(pragma(p, "SELECT count(*) FROM messages WHERE text = 'hello'"), int64_t{1});
                if (from < 4)  // the v4 step clears the English placeholder; a v4 file stores "" itself
                    QCOMPARE(QString::fromStdString((*s->conversation(8))->title), QString());  // untitled now
                QCOMPARE(QString::fromStdString((*s->conversation(9))->title), QString("New chat"));
                const auto branch = s->messages(7);
                QVERIFY(branch && branch->size() == 1);
                QCOMPARE(QString::fromStdString(branch->front().model), QString());  // unknown, not guessed
            }
            QCOMPARE(pragma(p, "PRAGMA auto_vacuum"), int64_t{2});
        }
    }

    void refusesANewerVersion() {
        const std::string p = path("future.db");
        {
            auto db = SqliteDb::open(p);
            QVERIFY((*db)->exec("PRAGMA user_version = 99"));
        }
        auto s = ConversationStore::open(p);
        QVERIFY(!s);
        QVERIFY(s.error().message.find("newer") != std::string::npos);
    }

    // A negative user_version (a damaged header; fuzz_store's crash input) is refused with a
    // message, not migrated from: step() indexed its table with it.
    void refusesANegativeVersion() {
        const std::string p = path("damaged.db");
        {
            auto db = SqliteDb::open(p);
            QVERIFY((*db)->exec("PRAGMA user_version = -101058055"));
        }
        auto s = ConversationStore::open(p);
        QVERIFY(!s);
        QVERIFY2(s.error().message.find("not one Hearth writes") != std::string::npos, s.error().message.c_str());
        auto db = SqliteDb::open(p);  // the file is left as it was
        QCOMPARE((*db)->queryInt("PRAGMA user_version").value_or(0), int64_t{-101058055});
    }

    void conversationsAndSearch() {
        auto s = openOk(path("c.db"));
        auto a = s->createConversation("Apples", "be brief");
        QTest::qWait(5);
        auto b = s->createConversation("Bananas");
        QVERIFY(a && b);
        auto list = s->listConversations();
        QCOMPARE(list->size(), size_t{2});
        QCOMPARE(list->front().id, b->id);  // newest first
        QTest::qWait(5);
        QVERIFY(s->appendMessage(a->id, 0, ChatRole::User, "tell me about Kiwis"));
        QCOMPARE(s->listConversations()->front().id, a->id);  // a message makes it the newest
        QCOMPARE(s->searchConversations("kiwi")->size(), size_t{1});
        QCOMPARE(s->searchConversations("BANANA")->front().id, b->id);
        QCOMPARE(s->searchConversations("%")->size(), size_t{0});
        QVERIFY(s->renameConversation(b->id, "Plantains"));
        QCOMPARE(QString::fromStdString((*s->conversation(b->id))->title), QString("Plantains"));
        QVERIFY(s->setSettings(a->id, R"({"temp": 0.2, "top_k": 10})"));
        QVERIFY(!s->setSettings(a->id, "not json"));
        QCOMPARE(QString::fromStdString((*s->conversation(a->id))->settingsJson),
                 QString(R"({"temp": 0.2, "top_k": 10})"));
        QVERIFY(s->deleteConversation(a->id));
        QVERIFY(!*s->conversation(a->id));
        QCOMPARE(pragma(path("c.db"), "SELECT count(*) FROM messages"), int64_t{0});
        QVERIFY(!s->deleteConversation(a->id));
    }

    // A reply records the model that wrote it; regenerated with another, each keeps its own.
    void repliesNameTheirModel() {
        auto s = openOk(path("m.db"));
        auto c = s->createConversation({});
        auto u = s->appendMessage(c->id, 0, ChatRole::User, "hi");
        auto a = s->appendMessage(c->id, u->id, ChatRole::Assistant, "hello");
        auto b = s->appendMessage(c->id, u->id, ChatRole::Assistant, "hey");
        QVERIFY(c && u && a && b);
        QVERIFY(s->setMessageModel(a->id, "SmolLM2-135M-Instruct"));
        QVERIFY(s->setMessageModel(b->id, "gemma-3-270m"));
        QVERIFY(!s->setMessageModel(12345, "x"));
        QCOMPARE(QString::fromStdString((*s->message(a->id))->model), QString("SmolLM2-135M-Instruct"));
        QCOMPARE(QString::fromStdString(s->activeBranch(c->id)->back().model), QString("gemma-3-270m"));
        QCOMPARE(QString::fromStdString((*s->message(u->id))->model), QString());
    }

    // A regenerated reply is a sibling; switching branches changes the active path.
    void branches() {
        auto s = openOk(path("b.db"));
        auto c = s->createConversation("t");
        auto u = s->appendMessage(c->id, 0, ChatRole::User, "q");
        auto r1 = s->appendMessage(c->id, u->id, ChatRole::Assistant, "first");
        auto u2 = s->appendMessage(c->id, r1->id, ChatRole::User, "more");
        auto r2 = s->appendMessage(c->id, u->id, ChatRole::Assistant, "second", false);
        QVERIFY(u && r1 && u2 && r2);
        auto active = s->activeBranch(c->id);
        QCOMPARE(active->size(), size_t{2});
        QCOMPARE(active->back().id, r2->id);
        QVERIFY(!active->back().complete);
        QCOMPARE(s->siblings(r2->id)->size(), size_t{2});
        QVERIFY(s->switchBranch(r1->id));  // down to its newest descendant
        active = s->activeBranch(c->id);
        QCOMPARE(active->size(), size_t{3});
        QCOMPARE(active->back().id, u2->id);
        GenerationStats stats;
        stats.generatedTokens = 5;
        stats.finishReason = "eos";
        QVERIFY(s->updateMessage(r2->id, "second, done", true, &stats));
        auto m = s->message(r2->id);
        QCOMPARE((*m)->stats.generatedTokens, 5);
        QCOMPARE(QString::fromStdString((*m)->stats.finishReason), QString("eos"));
        QVERIFY(!s->appendMessage(c->id + 100, 0, ChatRole::User, "orphan"));  // no such conversation
    }

    // Search says where each conversation matched: a message of the branch shown when one
    // holds the text, else one of another branch; only the title: no message.
    void searchSaysWhere() {
        auto s = openOk(path("w.db"));
        auto c = s->createConversation("Rivers");
        auto u = s->appendMessage(c->id, 0, ChatRole::User, "Which river crosses Paris?");
        auto a1 = s->appendMessage(c->id, u->id, ChatRole::Assistant, "The Seine.");
        auto a2 = s->appendMessage(c->id, u->id, ChatRole::Assistant, "It is the Seine, of course.");
        auto titled = s->createConversation("Seine trips");
        QVERIFY(u && a1 && a2 && titled);
        auto hits = s->searchMessages("SEINE");
        QCOMPARE(hits->size(), size_t{2});
        QCOMPARE(hits->at(1).messageId, a2->id);  // the branch shown, though a1 is older
        QVERIFY(hits->at(1).inActiveBranch);
        QCOMPARE(hits->at(1).messageText, std::string("It is the Seine, of course."));
        QCOMPARE(hits->at(0).messageId, int64_t{0});  // the title only
        hits = s->searchMessages("The Seine.");
        QCOMPARE(hits->size(), size_t{1});
        QCOMPARE(hits->front().messageId, a1->id);
        QVERIFY(!hits->front().inActiveBranch);
    }

    // Switching back to a branch shows the leaf it showed when it was left; a rename or a
    // switch leaves the list's order (by the last message) as it was.
    void switchingBackKeepsTheLeaf() {
        auto s = openOk(path("k.db"));
        auto c = s->createConversation("t");
        auto u = s->appendMessage(c->id, 0, ChatRole::User, "q");
        auto a1 = s->appendMessage(c->id, u->id, ChatRole::Assistant, "a1");
        auto u2 = s->appendMessage(c->id, a1->id, ChatRole::User, "u2");
        auto b1 = s->appendMessage(c->id, u2->id, ChatRole::Assistant, "b1");
        auto b2 = s->appendMessage(c->id, u2->id, ChatRole::Assistant, "b2");
        auto a2 = s->appendMessage(c->id, u->id, ChatRole::Assistant, "a2");
        QTest::qWait(5);
        auto later = s->createConversation("later");
        QVERIFY(b1 && b2 && a2 && later);
        QVERIFY(s->switchBranch(a1->id));
        QCOMPARE(s->activeBranch(c->id)->back().id, b2->id);  // nothing chosen below a1: the newest
        QVERIFY(s->switchBranch(b1->id));
        QVERIFY(s->switchBranch(a2->id));
        QCOMPARE(s->activeBranch(c->id)->back().id, a2->id);
        QVERIFY(s->switchBranch(a1->id));
        QCOMPARE(s->activeBranch(c->id)->back().id, b1->id);  // as left
        QVERIFY(s->renameConversation(c->id, "renamed"));
        QCOMPARE(s->listConversations()->front().id, later->id);
        // The list orders by the last change's millisecond; let the clock pass `later`'s, or
        // both could carry the same one and the tie go to the newer conversation.
        QTest::qWait(5);
        QVERIFY(s->appendMessage(c->id, b1->id, ChatRole::User, "more"));
        QCOMPARE(s->listConversations()->front().id, c->id);  // a message moves it up
    }

    // Garbage where the database should be: a clear message naming the file and the way
    // forward; the file is untouched; moveAside() keeps it and a fresh store opens.
    void damagedFile() {
        const std::string p = path("bad.db");
        {
            std::ofstream f(p, std::ios::binary);
            for (int i = 0; i < 5000; ++i) f << "this is not a database ";
        }
        auto s = ConversationStore::open(p);
        QVERIFY(!s);
        const QString msg = QString::fromStdString(s.error().message);
        QVERIFY2(msg.contains(QString::fromStdString(p)) && msg.contains("--db") && msg.contains("move"),
                 qPrintable(msg));
        auto moved = ConversationStore::moveAside(p);
        QVERIFY(moved);
        QVERIFY(QFile::exists(QString::fromStdString(*moved)));
        QVERIFY(openOk(p));
    }

    // A database whose pages were damaged after it was written: refused, never a crash.
    void damagedPages() {
        const std::string p = path("pages.db");
        {
            auto s = openOk(p);
            auto c = s->createConversation("x");
            for (int i = 0; i < 200; ++i)
                QVERIFY(s->appendMessage(c->id, 0, ChatRole::User, std::string(500, 'a' + i % 26)));
        }
        {
            std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(0);
            f << "garbage header!!garbage header!!";  // the 16-byte magic and the page size
        }
        QVERIFY(!ConversationStore::open(p));
    }

    // Roles are stored by name; a row whose name is none of the three (a file written by something
    // else, with the CHECK constraint switched off) is an error naming it, not a guessed role, and
    // the rest of the database stays readable.
    void unknownRoleIsAnError() {
        const std::string p = path("roles.db");
        int64_t bad = 0, good = 0;
        {
            auto s = openOk(p);
            QVERIFY(s);
            auto c1 = s->createConversation("bad");
            auto c2 = s->createConversation("good");
            QVERIFY(c1 && c2);
            bad = c1->id, good = c2->id;
            auto m = s->appendMessage(bad, 0, ChatRole::System, "be brief");
            QVERIFY(m && s->appendMessage(bad, m->id, ChatRole::User, "hi"));
            QVERIFY(s->appendMessage(good, 0, ChatRole::Assistant, "hello"));
        }
        {
            auto db = SqliteDb::open(p);
            QVERIFY(db);
            QVERIFY((*db)->exec("PRAGMA ignore_check_constraints = ON"));
            QVERIFY((*db)->exec("UPDATE messages SET role = 'tool' WHERE text = 'hi'"));
        }
        auto s = openOk(p);
        QVERIFY(s);
        auto branch = s->activeBranch(bad);
        QVERIFY(!branch);
        QVERIFY2(QString::fromStdString(branch.error().message).contains("\"tool\""), branch.error().message.c_str());
        auto other = s->activeBranch(good);
        QVERIFY(other && other->size() == 1);
        QCOMPARE((*other)[0].role, ChatRole::Assistant);
        QCOMPARE(pragma(p, "SELECT count(*) FROM messages WHERE role = 'system'"), int64_t{1});  // nothing rewritten
    }
};

QTEST_GUILESS_MAIN(TestStoreSchema)
#include "test_store_schema.moc"
