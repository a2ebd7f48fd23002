// Conversations out and in (app/store/conversation_export.h): a conversation with branches (an
// edited question, a regenerated reply), a system prompt, per-chat settings, a model and reply
// statistics, exported as Hearth JSON, deleted, and imported: equal message for message (role,
// text, completeness, time, statistics, the tree, the active branch), and searchable. The same
// through hearth-cli (--export ID --format json, --delete, --import; --export-all). A malformed
// file is a clear error that adds nothing. Two other apps' exports: ChatGPT's conversations.json
// (a tree with branches) and Claude's; the samples are the test's own text in the shapes that
// TomzxCode/llm-conversations-viewer documents in docs/formats.md (found with the search tool),
// with the node kinds a real ChatGPT export also has (a root node without a message, an empty
// hidden system message).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "app/store/conversation_export.h"
#include "app/store/conversation_store.h"
#include "tests/support/cli_runner.h"

using namespace hearth;

namespace {

// The tree as text: each message with its depth, role, text, completeness, time and tokens, in
// id order, and the active branch.
QString shape(const ConversationStore& store, int64_t id) {
    const auto all = store.messages(id);
    std::map<int64_t, int> depth;
    QStringList lines;
    for (const Message& m : *all) {
        depth[m.id] = m.parentId ? depth[m.parentId] + 1 : 0;
        lines << QStringLiteral("%1%2: %3 [%4 %5 %6 %7]")
                     .arg(QString(depth[m.id] * 2, ' '), QString::fromLatin1(chatRoleName(m.role)), QString::fromStdString(m.text))
                     .arg(m.complete)
                     .arg(m.createdMs)
                     .arg(m.stats.generatedTokens)
                     .arg(QString::fromStdString(m.stats.finishReason));
    }
    QStringList active;
    const auto branch = store.activeBranch(id);
    for (const Message& m : *branch) active << QString::fromStdString(m.text);
    const auto c = *store.conversation(id);
    return lines.join('\n') + "\nactive: " + active.join(" / ") +
        QStringLiteral("\ntitle: %1\nsystem: %2\nmodel: %3\nsettings: %4")
            .arg(QString::fromStdString(c->title), QString::fromStdString(c->systemPrompt),
                 QString::fromStdString(c->model),
                 QJsonDocument::fromJson(QByteArray::fromStdString(c->settingsJson)).toJson(QJsonDocument::Compact));
}

}  // namespace

class TestConversationExport : public QObject {
    Q_OBJECT
private slots:
    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        auto store = ConversationStore::open(db());
        QVERIFY(store);
        store_ = std::move(*store);
        auto c = store_->createConversation("Kyoto trip", "You are a travel guide.", "kyoto");
        QVERIFY(c);
        id_ = c->id;
        QVERIFY(store_->setSettings(id_, R"({"temperature":0.3,"top_k":20})"));
        QVERIFY(store_->setModel(id_, "/models/SmolLM2-135M-Instruct.Q4_1.gguf"));
        const auto q1 = store_->appendMessage(id_, 0, ChatRole::User, "Where should I stay?");
        const auto a1 = store_->appendMessage(id_, q1->id, ChatRole::Assistant, "Gion, near the temples.");
        GenerationStats stats;
        stats.generatedTokens = 7;
        stats.finishReason = "eos";
        stats.ttftMs = 12.5;
        QVERIFY(store_->updateMessage(a1->id, a1->text, true, &stats));
        const auto a1b = store_->appendMessage(id_, q1->id, ChatRole::Assistant, "Try a ryokan.");  // regenerated
        const auto q2 = store_->appendMessage(id_, a1b->id, ChatRole::User, "何时去最好？");
        QVERIFY(store_->appendMessage(id_, q2->id, ChatRole::Assistant, "秋天", false));  // cut short
        const auto q1b = store_->appendMessage(id_, 0, ChatRole::User, "Where should I stay, cheaply?");  // edited
        QVERIFY(store_->appendMessage(id_, q1b->id, ChatRole::Assistant, "A hostel by Kyoto Station."));
        QVERIFY(store_->switchBranch(a1->id));  // the first answer is the active branch
    }

    void roundTripThroughDeleteAndImport() {
        const QString before = shape(*store_, id_);
        QVERIFY(before.contains("active: Where should I stay? / Gion, near the temples.\n"));
        const auto json = exportConversationJson(*store_, id_);
        QVERIFY(json);
        QCOMPARE(QJsonDocument::fromJson(QByteArray::fromStdString(*json)).object()["messages"].toArray().size(), 7);
        QVERIFY(store_->deleteConversation(id_));
        QVERIFY(store_->listConversations()->empty());
        const auto ids = importConversationsJson(*store_, *json);
        QVERIFY2(ids, ids ? "" : ids.error().message.c_str());
        QCOMPARE(ids->size(), size_t{1});
        QCOMPARE(shape(*store_, ids->front()), before);
        QCOMPARE((*store_->conversation(ids->front()))->handle, std::string("kyoto"));
        QCOMPARE(store_->searchConversations("ryokan")->size(), size_t{1});  // searchable like any other
        // Imported again beside itself: a second conversation, its handle (taken) dropped.
        const auto again = importConversationsJson(*store_, *json);
        QVERIFY(again);
        QCOMPARE((*store_->conversation(again->front()))->handle, std::string());
        QCOMPARE(shape(*store_, again->front()), before);
    }

    void exportAllImportsIntoAnotherDatabase() {
        QVERIFY(store_->createConversation("Empty one"));
        const auto all = exportAllConversationsJson(*store_);
        QVERIFY(all);
        auto other = ConversationStore::open((dir_->path() + "/other.db").toStdString());
        const auto ids = importConversationsJson(**other, *all);
        QVERIFY(ids);
        QCOMPARE(ids->size(), size_t{2});
        QCOMPARE((*other)->listConversations()->size(), size_t{2});
        const auto kyoto = (*other)->conversationByHandle("kyoto");
        QVERIFY(kyoto && *kyoto);
        QCOMPARE(shape(**other, (*kyoto)->id), shape(*store_, id_));
    }

    void markdownIsTheActiveBranch() {
        const auto md = exportConversationMarkdown(*store_, id_);
        QVERIFY(md);
        QCOMPARE(*md,
                 std::string("# Kyoto trip\n\n**System:** You are a travel guide.\n\n## User\n\nWhere should I "
                             "stay?\n\n## Assistant\n\nGion, near the temples.\n\n"));
    }

    void malformedFilesAddNothing_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("message");
        const QByteArray head = R"({"format":"hearth.conversation","version":1,"title":"t","messages":)";
        QTest::newRow("not JSON") << QByteArray("{\"format\": ") << "conversation file: text is not JSON";
        QTest::newRow("another format") << QByteArray(R"({"format":"chatgpt"})")
                                        << "conversation file: conversation is not a \"hearth.conversation\" object";
        QTest::newRow("newer version") << QByteArray(R"({"format":"hearth.conversation","version":2})")
                                       << "has version 2; this Hearth reads version 1";
        QTest::newRow("unknown role") << head + R"([{"id":1,"parent":0,"role":"tool","text":"x"}]})"
                                      << "conversation message 1 has role \"tool\" (user, assistant or system)";
        QTest::newRow("parent after child")
            << head + R"([{"id":1,"parent":2,"role":"user","text":"x"},{"id":2,"parent":0,"role":"user","text":"y"}]})"
            << "conversation message 1 has a parent that does not come before it";
        QTest::newRow("second conversation bad")
            << QByteArray(R"({"format":"hearth.conversations","version":1,"conversations":[)") + head + "[]}," + head +
                R"([{"id":1,"role":"user"}]}]})"
            << "conversation 2 message 1 has no text";
    }
    void malformedFilesAddNothing() {
        QFETCH(QByteArray, json);
        QFETCH(QString, message);
        const auto ids = importConversationsJson(*store_, json.toStdString());
        QVERIFY(!ids);
        QCOMPARE(ids.error().code, ErrorCode::InvalidFormat);
        QVERIFY2(QString::fromStdString(ids.error().message).contains(message), ids.error().message.c_str());
        QCOMPARE(store_->listConversations()->size(), size_t{1});
    }

    // ChatGPT: the regenerated answer is a branch; current_node picks the active one; the root
    // node without a message and the empty system message are left out.
    void importsChatGptExport() {
        const QByteArray json = R"([{"title": "Packing list", "create_time": 1717000000.5, "update_time": 1717000300.0,
          "mapping": {
            "root": {"id": "root", "message": null, "parent": null, "children": ["sys"]},
            "sys": {"id": "sys", "parent": "root", "children": ["u1"], "message": {"id": "sys",
                    "author": {"role": "system"}, "create_time": null, "content": {"content_type": "text", "parts": [""]}}},
            "u1": {"id": "u1", "parent": "sys", "children": ["a1", "a2"], "message": {"id": "u1",
                   "author": {"role": "user"}, "create_time": 1717000001.0,
                   "content": {"content_type": "text", "parts": ["What should I pack for Kyoto in autumn?"]}}},
            "a1": {"id": "a1", "parent": "u1", "children": [], "message": {"id": "a1", "author": {"role": "assistant"},
                   "create_time": 1717000002.0, "content": {"content_type": "text", "parts": ["A light jacket."]}}},
            "a2": {"id": "a2", "parent": "u1", "children": ["u2"], "message": {"id": "a2",
                   "author": {"role": "assistant"}, "create_time": 1717000003.0, "metadata": {"model_slug": "gpt-4"},
                   "content": {"content_type": "text", "parts": ["Layers and comfortable shoes."]}}},
            "u2": {"id": "u2", "parent": "a2", "children": ["a3"], "message": {"id": "u2", "author": {"role": "user"},
                   "create_time": 1717000004.0, "content": {"content_type": "text", "parts": ["And for rain?"]}}},
            "a3": {"id": "a3", "parent": "u2", "children": [], "message": {"id": "a3",
                   "author": {"role": "assistant"}, "create_time": 1717000005.0,
                   "content": {"content_type": "text", "parts": ["A compact umbrella."]}}}},
          "current_node": "a3"}])";
        const auto ids = importConversationsJson(*store_, json.toStdString());
        QVERIFY2(ids, ids ? "" : ids.error().message.c_str());
        QCOMPARE(ids->size(), size_t{1});
        QCOMPARE(shape(*store_, ids->front()),
                 QStringLiteral(R"(user: What should I pack for Kyoto in autumn? [1 1717000001000 0 ]
  assistant: A light jacket. [1 1717000002000 0 ]
  assistant: Layers and comfortable shoes. [1 1717000003000 0 ]
    user: And for rain? [1 1717000004000 0 ]
      assistant: A compact umbrella. [1 1717000005000 0 ]
active: What should I pack for Kyoto in autumn? / Layers and comfortable shoes. / And for rain? / A compact umbrella.
title: Packing list
system: 
model: 
settings: {})"));
        const QByteArray broken = R"([{"title": "x", "current_node": "a", "mapping": {"a": {"id": "a", "parent": null,
            "children": ["gone"], "message": null}}}])";
        const auto refused = importConversationsJson(*store_, broken.toStdString());
        QVERIFY(!refused);
        QCOMPARE(QString::fromStdString(refused.error().message),
                 QString("conversation file: ChatGPT conversation 1 node a has a child that is not in the mapping"));
        QCOMPARE(store_->listConversations()->size(), size_t{2});
    }

    void importsClaudeExport() {
        const QByteArray json = R"([{"uuid": "c-1", "name": "Tea haiku", "created_at": "2024-05-01T09:00:00.000Z",
          "updated_at": "2024-05-01T09:01:00.000Z", "chat_messages": [
            {"uuid": "m1", "text": "Write a haiku about green tea.", "sender": "human",
             "created_at": "2024-05-01T09:00:00.000Z"},
            {"uuid": "m2", "text": "Steam over the cup", "sender": "assistant", "created_at": "2024-05-01T09:00:05.250Z"},
            {"uuid": "m3", "text": "Another, about rain?", "sender": "human", "created_at": "2024-05-01T09:00:30.000Z"}]}])";
        const auto ids = importConversationsJson(*store_, json.toStdString());
        QVERIFY2(ids, ids ? "" : ids.error().message.c_str());
        QCOMPARE(shape(*store_, ids->front()),
                 QStringLiteral(R"(user: Write a haiku about green tea. [1 1714554000000 0 ]
  assistant: Steam over the cup [1 1714554005250 0 ]
    user: Another, about rain? [1 1714554030000 0 ]
active: Write a haiku about green tea. / Steam over the cup / Another, about rain?
title: Tea haiku
system: 
model: 
settings: {})"));
        QCOMPARE(store_->searchConversations("green tea")->size(), size_t{1});
        const auto refused = importConversationsJson(
            *store_, R"([{"name": "x", "chat_messages": [{"text": "hi", "sender": "robot"}]}])");
        QVERIFY(!refused);
        QCOMPARE(
            QString::fromStdString(refused.error().message),
            QString("conversation file: Claude conversation 1 message 1 has sender \"robot\" (human or assistant)"));
        const auto unknown = importConversationsJson(*store_, R"([{"messages": []}])");
        QVERIFY(!unknown);
        QVERIFY(unknown.error().message.find("is not a Hearth, ChatGPT or Claude export") != std::string::npos);
    }

    // hearth-cli: --export ID --format json, --delete ID, --import FILE; the same conversation.
    void throughTheCli() {
        const QString before = shape(*store_, id_);
        store_.reset();  // the CLI opens the database itself
        const QString path = QString::fromStdString(db());
        const test::CliRun exported =
            test::runCli({"conversations", "--db", path, "--export", "kyoto", "--format", "json"});
        QVERIFY2(exported.exitCode == 0, exported.err.constData());
        const QString file = dir_->path() + "/kyoto.json";
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(exported.out) == exported.out.size());
        f.close();
        QCOMPARE(test::runCli({"conversations", "--db", path, "--delete", "kyoto"}).exitCode, 0);
        const test::CliRun imported = test::runCli({"conversations", "--db", path, "--import", file});
        QVERIFY2(imported.exitCode == 0, imported.err.constData());
        QVERIFY(imported.out.startsWith("imported conversation "));
        const test::CliRun all = test::runCli({"conversations", "--db", path, "--export-all"});
        QCOMPARE(QJsonDocument::fromJson(all.out).object()["conversations"].toArray().size(), 1);
        auto store = ConversationStore::open(db());
        const auto kyoto = (*store)->conversationByHandle("kyoto");
        QVERIFY(kyoto && *kyoto);
        QCOMPARE(shape(**store, (*kyoto)->id), before);
        const test::CliRun bad = test::runCli({"conversations", "--db", path, "--import", dir_->path() + "/none.json"});
        QVERIFY(bad.exitCode != 0 && bad.err.contains("cannot read"));
    }

private:
    std::string db() const { return (dir_->path() + "/chats.db").toStdString(); }
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<ConversationStore> store_;
    int64_t id_ = 0;
};

QTEST_GUILESS_MAIN(TestConversationExport)
#include "test_conversation_export.moc"
