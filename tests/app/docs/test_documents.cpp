// Documents in a chat without a model: a 200-page text searched for a fact on page 150 (with
// the retrieval time and the FTS5 index size in the log), a Chinese document searched by a
// Chinese question, a PDF written by QPdfWriter read back, what a turn's prompt carries,
// restart, export -> delete -> import, the schema upgrade, and files that are not documents.
#include <QFile>
#if defined(HEARTH_TEST_PDF_WRITER)  // trees with Qt Gui (not the sanitizer builds, which have no GUI)
#include <QGuiApplication>
#include <QPainter>
#include <QPdfWriter>
#endif
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <random>

#include "app/chat/stored_turn.h"
#include "app/docs/document_reader.h"
#include "app/docs/passages.h"
#include "app/docs/turn_documents.h"
#include "app/store/attachment_store.h"
#include "app/store/conversation_export.h"
#include "app/store/schema.h"
#include "app/store/sqlite_db.h"
#include "tests/support/generated_documents.h"
#include "tests/support/unreadable_dir.h"

using namespace hearth;
using hearth::test::kFact;
using hearth::test::longDocument;

namespace {

const char* const kChineseFact = "星河研究所的所长名叫林晓光。";

std::string chineseDocument(int paragraphs) {
    static const char* who[] = {"这个村子", "我们的老师", "那位厨师", "城东的工厂", "一位老人", "学校的图书馆"};
    static const char* did[] = {"今年种了", "昨天修好了", "仔细检查了", "慢慢整理了", "重新设计了", "送来了"};
    static const char* what[] = {"许多苹果树", "旧的水管", "一张地图", "三把椅子", "全年的账本", "新的课程表"};
    std::mt19937 rng(7);
    auto pick = [&rng](const auto& list) { return list[rng() % std::size(list)]; };
    std::string out;
    for (int p = 0; p < paragraphs; ++p) {
        for (int s = 0; s < 8; ++s) {
            if (p == paragraphs * 2 / 3 && s == 3) out += kChineseFact;
            out += std::string(pick(who)) + pick(did) + pick(what) + "，编号" + std::to_string(rng() % 1000) + "。";
        }
        out += "\n\n";
    }
    return out;
}

bool containsFact(const std::vector<TurnSource>& sources, const std::string& fact) {
    for (const TurnSource& s : sources)
        if (s.text.find(fact) != std::string::npos) return true;
    return false;
}

}  // namespace

class TestDocuments : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const QString& name) const { return (dir_.path() + "/" + name).toStdString(); }
    QString writeFile(const QString& name, const QByteArray& bytes) {
        const QString p = dir_.path() + "/" + name;
        QFile f(p);
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) qWarning("cannot write %s", qPrintable(p));
        return p;
    }
    static std::unique_ptr<ConversationStore> open(const std::string& p) {
        auto s = ConversationStore::open(p);
        if (!s) qWarning("%s", s.error().message.c_str());
        return s ? std::move(*s) : nullptr;
    }
    static int64_t count(const std::string& p, const char* sql) {
        auto db = SqliteDb::open(p);
        return db ? (*db)->queryInt(sql).value_or(-1) : -1;
    }

private slots:
    void passagesAreLosslessAndSized() {
        const std::string text = longDocument(5, 0) + chineseDocument(20);
        const std::vector<std::string> passages = splitPassages(text);
        std::string joined;
        for (const std::string& p : passages) {
            joined += p;
            QVERIFY2(estimateTokens(p) <= kPassageTokens, p.c_str());
            QVERIFY(!p.empty());
        }
        QCOMPARE(joined, text);
        QVERIFY(passages.size() >= size_t(estimateTokens(text) / kPassageTokens));
        // English text is cut after a sentence or a paragraph, never inside a word.
        for (const std::string& p : splitPassages(longDocument(5, 0)))
            QVERIFY2(p.back() == ' ' || p.back() == '\n', p.c_str());
        QCOMPARE(turnDocumentBudget(0), kTurnDocumentBudgetTokens);
        QCOMPARE(turnDocumentBudget(8192), kTurnDocumentBudgetTokens);
        QCOMPARE(turnDocumentBudget(2048), 512);  // a quarter of a small context
        QCOMPARE(estimateTokens("abcdefgh"), 2);
        QCOMPARE(estimateTokens("会议"), 2);
    }

    // Never the raw text: quoted terms of 3+ characters, OR-ed; quotes and operators inert.
    void queryIsBuiltSafely() {
        QCOMPARE(QString::fromStdString(passageQuery("What is it? ok")), QString());
        QCOMPARE(QString::fromStdString(passageQuery("Ferry \"times\" NEAR(x) OR *")),
                 QString("\"ferry\" OR \"times\" OR \"near\""));
        QCOMPARE(QString::fromStdString(passageQuery("北京会议")), QString("\"北京会\" OR \"京会议\""));
        auto store = open(path("query.db"));
        QVERIFY(store);
        auto c = store->createConversation("q");
        QVERIFY(c && store->attachments().add(c->id, "a.txt", "text", "Ferry times: NEAR the \"pier\" at noon. *"));
        for (const char* hostile : {"\"", "NEAR(\"a\" \"b\")", "*", "a:b", ")) OR ((", "pier\" OR \"x", "   "}) {
            auto found = store->attachments().search(c->id, hostile, 5);
            QVERIFY2(found, hostile);  // no FTS5 syntax error
        }
        auto found = store->attachments().search(c->id, "pier\" OR \"x", 5);
        QCOMPARE(found->size(), size_t{1});
    }

    // The figure: a 200-page text, a question about page 150.
    void findsAFactOnPage150Of200() {
        const std::string p = path("long.db");
        auto store = open(p);
        QVERIFY(store);
        auto c = store->createConversation("long");
        QVERIFY(c);
        const std::string text = longDocument(200, 150);
        QVERIFY(text.size() >= 600'000);
        QCOMPARE(text.find(kFact), text.rfind(kFact));  // only on page 150
        QVERIFY(text.find(kFact) > text.find("Page 150\n") && text.find(kFact) < text.find("Page 151\n"));
        const auto t0 = std::chrono::steady_clock::now();
        auto a = store->attachments().add(c->id, "handbook.txt", "text", text);
        const double addMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY(a);
        QVERIFY(!a->whole());
        auto user = store->appendMessage(c->id, 0, ChatRole::User, "When does the night ferry to Vellmora leave?");
        QVERIFY(user);
        const auto t1 = std::chrono::steady_clock::now();
        auto chosen = recordTurnDocuments(*store, *user);
        const double turnMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
        QVERIFY(chosen);
        QVERIFY(containsFact(chosen->sources, kFact));
        QCOMPARE(chosen->sources.front().name, std::string("handbook.txt"));
        QVERIFY(chosen->sources.front().text.find(kFact) != std::string::npos);  // the best match
        QVERIFY(chosen->tokens <= kTurnDocumentBudgetTokens && chosen->tokens > 0);
        auto bytes = store->attachments().indexBytes();
        QVERIFY(bytes && *bytes > 0);
        qInfo("200-page document: %zu bytes, %d passages, ~%d tokens; indexed in %.1f ms", text.size(), a->passages,
              a->tokens, addMs);
        qInfo(
            "retrieval for the question: search %.2f ms, whole turn (choose + record) %.2f ms; "
            "%zu passages, %d of %d tokens",
            chosen->searchMs, turnMs, chosen->sources.size(), chosen->tokens, chosen->budget);
        qInfo("FTS5 index size (dbstat, passage_index shadow tables): %lld bytes", static_cast<long long>(*bytes));
    }

    void chineseQuestionFindsChineseText() {
        auto store = open(path("zh.db"));
        QVERIFY(store);
        auto c = store->createConversation("zh");
        const std::string text = chineseDocument(60);
        auto a = store->attachments().add(c->id, "报告.txt", "text", text);
        QVERIFY(a && !a->whole());
        auto chosen = chooseTurnDocuments(*store, c->id, {}, "星河研究所的所长叫什么名字？");
        QVERIFY(chosen);
        QVERIFY(!chosen->sources.empty());
        QVERIFY(chosen->sources.front().text.find(kChineseFact) != std::string::npos);
    }

    void pdfWrittenByQtRoundTrips() {
#if !defined(HEARTH_TEST_PDF_WRITER)
        QSKIP("this tree has no Qt Gui to write a PDF with (the sanitizer builds); the release tree runs this case");
#else
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed: packaging/scripts/install-deps.sh installs it");
        const QString pdf = dir_.path() + "/notes.pdf";
        {
            QPdfWriter writer(pdf);
            writer.setResolution(300);
            QPainter painter(&writer);
            QFont font("DejaVu Sans");
            font.setPointSize(12);
            painter.setFont(font);
            painter.drawText(QPointF(200, 300), "Quarterly figures: the lantern count rose to 4,812.");
            writer.newPage();
            painter.drawText(QPointF(200, 300), "Second page: the orchard has 77 pear trees.");
        }
        auto doc = readDocument(pdf);
        QVERIFY2(doc, doc ? "" : doc.error().message.c_str());
        QCOMPARE(doc->kind, QString("pdf"));
        const QString text = QString::fromStdString(doc->text).simplified();
        QVERIFY2(text.contains("Quarterly figures: the lantern count rose to 4,812."), qPrintable(text));
        QVERIFY2(text.contains("Second page: the orchard has 77 pear trees."), qPrintable(text));
#endif
    }

    // The documents go into the turn they were chosen for; an earlier turn renders as it did,
    // so the stored prefix (and its saved KV) stays valid.
    void documentsGoIntoTheirOwnTurnOnly() {
        auto store = open(path("turns.db"));
        QVERIFY(store);
        auto c = store->createConversation("turns", "Be brief.");
        QVERIFY(store->attachments().add(c->id, "notes.md", "markdown", "Shopping: lentils, saffron, limes.\n"));
        QVERIFY(store->attachments().add(c->id, "handbook.txt", "text", longDocument(20, 10)));
        auto u1 = store->appendMessage(c->id, 0, ChatRole::User, "What should I buy?");
        auto d1 = recordTurnDocuments(*store, *u1);
        QVERIFY(d1);
        QCOMPARE(d1->sources.front().passage, 0);  // the small document, whole
        QCOMPARE(d1->sources.front().name, std::string("notes.md"));
        auto r1 = store->appendMessage(c->id, u1->id, ChatRole::Assistant, "Lentils, saffron and limes.");
        const auto conv = *store->conversation(c->id);
        const std::vector<ChatMessage> before = chatMessages(*conv, *store->activeBranch(c->id));
        auto u2 = store->appendMessage(c->id, r1->id, ChatRole::User, "When does the night ferry to Vellmora leave?");
        auto d2 = recordTurnDocuments(*store, *u2);
        QVERIFY(d2);
        for (const TurnSource& s : d2->sources) QCOMPARE(s.name, std::string("handbook.txt"));  // notes.md not again
        QVERIFY(containsFact(d2->sources, kFact));
        const std::vector<ChatMessage> after = chatMessages(*conv, *store->activeBranch(c->id));
        QCOMPARE(after.size(), before.size() + 1);
        for (size_t i = 0; i < before.size(); ++i) QCOMPARE(after[i].content, before[i].content);  // same prefix
        QCOMPARE(after[0].role, ChatRole::System);
        QCOMPARE(after[0].content, std::string("Be brief."));  // never in the system prompt
        QVERIFY(after[1].content.find("<document name=\"notes.md\">") == 0);
        QVERIFY(after[1].content.find("What should I buy?") != std::string::npos);
        QVERIFY(after.back().content.find(kFact) != std::string::npos);
        QVERIFY(after.back().content.find("Vellmora leave?") != std::string::npos);
        // The message row keeps the user's words; what the turn carried is recorded beside them.
        QCOMPARE((*store->message(u2->id))->text, std::string("When does the night ferry to Vellmora leave?"));
        QCOMPARE(sourcesFromJson((*store->message(u2->id))->documentsJson), d2->sources);
    }

    void restartKeepsAttachments() {
        const std::string p = path("restart.db");
        int64_t id = 0;
        {
            auto store = open(p);
            auto c = store->createConversation("r");
            id = c->id;
            QVERIFY(store->attachments().add(c->id, "handbook.txt", "text", longDocument(30, 20)));
            QVERIFY(store->attachments().add(c->id, "notes.md", "markdown", "Lentils and limes."));
        }
        auto store = open(p);
        auto list = store->attachments().list(id);
        QVERIFY(list);
        QCOMPARE(list->size(), size_t{2});
        QCOMPARE(list->at(1).name, std::string("notes.md"));
        QCOMPARE(*store->attachments().text(list->at(0).id), longDocument(30, 20));
        auto found = store->attachments().search(id, "night ferry Vellmora", 3);
        QVERIFY(found && !found->empty());
        QVERIFY(found->front().text.find(kFact) != std::string::npos);
    }

    void exportDeleteImportKeepsThem() {
        const std::string p = path("export.db");
        auto store = open(p);
        auto c = store->createConversation("exported");
        const std::string big = longDocument(20, 10);
        QVERIFY(store->attachments().add(c->id, "handbook.txt", "text", big));
        QVERIFY(store->attachments().add(c->id, "notes.md", "markdown", "Lentils and limes.\n"));
        auto u = store->appendMessage(c->id, 0, ChatRole::User, "When does the night ferry to Vellmora leave?");
        QVERIFY(recordTurnDocuments(*store, *u));
        QVERIFY(store->appendMessage(c->id, u->id, ChatRole::Assistant, "At 23:40."));
        const std::vector<Message> original = *store->messages(c->id);
        auto json = exportConversationJson(*store, c->id);
        QVERIFY(json);
        QVERIFY(store->deleteConversation(c->id));
        QCOMPARE(count(p, "SELECT count(*) FROM attachments"), int64_t{0});
        QCOMPARE(count(p, "SELECT count(*) FROM attachment_passages"), int64_t{0});
        QCOMPARE(count(p, "SELECT count(*) FROM passage_index_docsize"), int64_t{0});  // the index too
        QCOMPARE(count(p, "SELECT count(*) FROM turn_documents"), int64_t{0});
        auto ids = importConversationsJson(*store, *json);
        QVERIFY(ids && ids->size() == 1);
        auto list = store->attachments().list(ids->front());
        QCOMPARE(list->size(), size_t{2});
        QCOMPARE(list->at(0).name, std::string("handbook.txt"));
        QCOMPARE(*store->attachments().text(list->at(0).id), big);
        QCOMPARE(*store->attachments().text(list->at(1).id), std::string("Lentils and limes.\n"));
        const std::vector<Message> imported = *store->messages(ids->front());
        QCOMPARE(imported.size(), original.size());
        for (size_t i = 0; i < imported.size(); ++i) {
            QCOMPARE(imported[i].text, original[i].text);
            QCOMPARE(imported[i].documentsJson, original[i].documentsJson);
        }
        QVERIFY(containsFact(sourcesFromJson(imported[0].documentsJson), kFact));
        auto found = store->attachments().search(ids->front(), "Vellmora ferry", 1);
        QVERIFY(found && found->size() == 1 && found->front().text.find(kFact) != std::string::npos);
        // A file whose attachment has no text adds nothing.
        const std::string broken =
            QString::fromStdString(*json).replace("\"text\": \"Lentils and limes.\\n\"", "\"text\": 5").toStdString();
        QVERIFY(broken != *json);
        const int64_t before = count(p, "SELECT count(*) FROM conversations");
        auto bad = importConversationsJson(*store, broken);
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.find("attachment 2") != std::string::npos, bad.error().message.c_str());
        QCOMPARE(count(p, "SELECT count(*) FROM conversations"), before);
    }

    // A version 2 database (before attachments) upgrades and keeps every row.
    void upgradesFromVersion2() {
        const std::string p = path("v2.db");
        {
            auto db = SqliteDb::open(p);
            QVERIFY(db && prepareSchema(**db, 2));
            QVERIFY(
                (*db)->exec("INSERT INTO conversations(id, title, created_ms, updated_ms, kv_used_ms)"
                            " VALUES(3, 'kept', 1, 2, 5)"));
            QVERIFY(
                (*db)->exec("INSERT INTO messages(id, conversation_id, role, text, created_ms)"
                            " VALUES(1, 3, 'user', 'hello', 1), (2, 3, 'assistant', 'hi', 2)"));
            QVERIFY((*db)->exec("UPDATE messages SET parent_id = 1 WHERE id = 2"));
            QVERIFY((*db)->exec("INSERT INTO model_fingerprints VALUES('/m.gguf', 10, 20, 'abc')"));
        }
        QCOMPARE(count(p, "PRAGMA user_version"), int64_t{2});
        auto store = open(p);
        QVERIFY(store);
        QCOMPARE(count(p, "PRAGMA user_version"), int64_t{kSchemaVersion});
        auto branch = store->activeBranch(3);
        QVERIFY(branch);
        QCOMPARE(count(p, "SELECT count(*) FROM messages"), int64_t{2});
        QCOMPARE((*store->message(2))->text, std::string("hi"));
        QCOMPARE((*store->message(1))->documentsJson, std::string());
        QCOMPARE(count(p, "SELECT kv_used_ms FROM conversations WHERE id = 3"), int64_t{5});
        QCOMPARE(count(p, "SELECT count(*) FROM model_fingerprints WHERE fingerprint = 'abc'"), int64_t{1});
        QVERIFY(store->attachments().add(3, "a.txt", "text", "Attached after the upgrade."));
    }

    // Files that are not documents: a clear message naming the file, and nothing stored.
    void badFilesAreRefusedClearly() {
        QByteArray binary(4096, '\0');
        for (int i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>((i * 37) % 256);
        struct Case {
            QString path;
            const char* says;
        };
        std::vector<Case> cases{
            {writeFile("image.png", binary), "not a text file"},
            {writeFile("latin1.txt", QByteArray("caf\xe9 cr\xe8me")), "not a text file"},
            {writeFile("empty.md", QByteArray("  \n\n ")), "no text"},
            {dir_.path() + "/missing.txt", "does not exist"},
            {dir_.path(), "not a file"},
        };
        if (!QStandardPaths::findExecutable("pdftotext").isEmpty())
            cases.push_back(
                {writeFile("broken.pdf", QByteArray("%PDF-1.7\n1 0 obj <<garbage>>\n%%EOF")), "cannot be read"});
        auto store = open(path("bad.db"));
        auto c = store->createConversation("bad");
        QVERIFY(store->attachments().add(c->id, "good.txt", "text", "Kept."));
        for (const Case& k : cases) {
            auto doc = readDocument(k.path);
            QVERIFY2(!doc, qPrintable(k.path));
            const std::string m = doc.error().message;
            QVERIFY2(m.find(QFileInfo(k.path).fileName().toStdString()) == 0, m.c_str());
            QVERIFY2(m.find(k.says) != std::string::npos, m.c_str());
        }
        // Unreadable (mode 000, and root's override dropped for this thread): said so, kept nothing.
        const QString locked = writeFile("locked.txt", "secret");
        QFile::setPermissions(locked, QFileDevice::Permissions());
        QVERIFY(test::dropFileReadOverride());
        auto doc = readDocument(locked);
        QVERIFY(!doc);
        QVERIFY2(doc.error().message.find("locked.txt") == 0, doc.error().message.c_str());
        QFile::setPermissions(locked, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        auto list = store->attachments().list(c->id);
        QCOMPARE(list->size(), size_t{1});
        QCOMPARE(*store->attachments().text(list->front().id), std::string("Kept."));
        auto good = readDocument(writeFile("fine.py", "print('ok')\n"));
        QVERIFY(good);
        QCOMPARE(good->kind, QString("code"));
    }
};

QTEST_MAIN(TestDocuments)
#include "test_documents.moc"
