// Conversations in and out through the window, offscreen: the Hearth menu's actions and the
// sidebar's context menu, with the file dialogs replaced by a chooser the test sets (the store,
// the export and import code and the worker thread are the real ones). A conversation with
// branches (a regenerated reply, an edited first question, an interrupted reply), a system prompt,
// settings, a model and reply statistics is exported as JSON, deleted and imported: equal message
// for message, opened in the window, searchable; it continues with a real model like any other
// (its KV is computed on first use). Markdown is chosen by the save dialog's filter. ChatGPT's
// and Claude's exports import through the same action; the samples are this test's own text in
// the shapes TomzxCode/llm-conversations-viewer documents in docs/formats.md (found with the
// search tool), as tests/app/store/test_conversation_export.cpp's are. A broken file shows the
// reason in plain words, its detail under "Show Details…", and changes nothing. 1,000 messages
// are exported and imported off the GUI thread; the test prints the time and the longest stall
// of the GUI thread.
#include <QAction>
#include <QListView>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTranslator>

#include "app/chat/conversation_transfer.h"
#include "app/store/conversation_export.h"
#include "tests/ui/gui_app.h"
#include "ui/transfer_actions.h"

using namespace hearth;
using namespace hearth::test;

namespace {

// The tree as text: each message with its depth, role, text, completeness, time and statistics,
// then the active branch and the conversation's own fields.
QString shape(const ConversationStore& store, int64_t id) {
    const auto all = store.messages(id);
    std::map<int64_t, int> depth;
    QStringList lines;
    for (const Message& m : *all) {
        depth[m.id] = m.parentId ? depth[m.parentId] + 1 : 0;
        lines << QStringLiteral("%1%2: %3 [%4 %5 %6/%7 %8]")
                     .arg(QString(depth[m.id] * 2, ' '), QString::fromLatin1(chatRoleName(m.role)),
                          QString::fromStdString(m.text))
                     .arg(m.complete)
                     .arg(m.createdMs)
                     .arg(m.stats.promptTokens)
                     .arg(m.stats.generatedTokens)
                     .arg(QString::fromStdString(m.stats.finishReason));
    }
    QStringList active;
    const auto branch = store.activeBranch(id);
    for (const Message& m : *branch) active << QString::fromStdString(m.text);
    const Conversation c = **store.conversation(id);
    return lines.join('\n') + "\nactive: " + active.join(" / ") +
        QStringLiteral("\ntitle: %1\nhandle: %2\nsystem: %3\nmodel: %4\nsettings: %5")
            .arg(QString::fromStdString(c.title), QString::fromStdString(c.handle),
                 QString::fromStdString(c.systemPrompt), QString::fromStdString(c.model),
                 QJsonDocument::fromJson(QByteArray::fromStdString(c.settingsJson)).toJson(QJsonDocument::Compact));
}

bool writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

QByteArray readFile(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A ChatGPT conversations.json: the first answer was regenerated (two branches under the
// question); current_node keeps the first one active.
const char kChatGpt[] = R"([{"title": "Sourdough starter", "create_time": 1718000000.0, "update_time": 1718000500.0,
  "mapping": {
    "r": {"id": "r", "message": null, "parent": null, "children": ["q1"]},
    "q1": {"id": "q1", "parent": "r", "children": ["b1", "b2"], "message": {"id": "q1", "author": {"role": "user"},
           "create_time": 1718000001.0,
           "content": {"content_type": "text", "parts": ["How often should I feed a sourdough starter?"]}}},
    "b1": {"id": "b1", "parent": "q1", "children": [], "message": {"id": "b1", "author": {"role": "assistant"},
           "create_time": 1718000002.0, "status": "finished_successfully",
           "content": {"content_type": "text", "parts": ["Once a day at room temperature."]}}},
    "b2": {"id": "b2", "parent": "q1", "children": [], "message": {"id": "b2", "author": {"role": "assistant"},
           "create_time": 1718000003.0, "status": "finished_successfully",
           "content": {"content_type": "text", "parts": ["Twice a day when it is warm; weekly in the fridge."]}}}},
  "current_node": "b1"}])";

// A Claude conversations.json: one linear conversation.
const char kClaude[] = R"([{"uuid": "0b6c1f7e-3d0a-4c2e-9a51-2f3e4d5c6b7a", "name": "Bike chain",
  "created_at": "2024-06-01T10:00:00.000Z", "updated_at": "2024-06-01T10:00:04.000Z", "chat_messages": [
    {"uuid": "m-1", "text": "My bike chain squeaks. What should I use on it?", "sender": "human",
     "created_at": "2024-06-01T10:00:00.000Z"},
    {"uuid": "m-2", "text": "A dry PTFE chain lube, then wipe off the excess.", "sender": "assistant",
     "created_at": "2024-06-01T10:00:04.000Z"}]}])";

}  // namespace

class TestConversationTransfer : public QObject {
    Q_OBJECT
private slots:
    void init();
    void roundTripWithBranches();
    void markdownByFilter();
    void exportAllAndImportAll();
    void importsChatGptAndClaude();
    void brokenFileChangesNothing_data();
    void brokenFileChangesNothing();
    void contextMenuExports();
    void movedDatabaseIsNotMadeAgain();
    void thousandMessagesOffTheGuiThread();
    void importedConversationContinues();
    void saysItInChinese();
    void importLeavesAReplyAlone();

private:
    qint64 makeBranchyConversation(ConversationStore& store);
    // Triggers the action with the chooser answering `answer`; returns the outcome (waits for it).
    TransferOutcome run(GuiApp& app, QAction* action, const TransferActions::FileChoice& answer);
    QString path(const QString& name) const { return dir_->path() + "/" + name; }

    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<GuiApp> app_;
    QList<TransferActions::Dialog> asked_;  // the dialogs the actions asked for
    double longestStallMs_ = 0;  // of the GUI thread while the last run() waited, trigger included
};

void TestConversationTransfer::init() {
    app_.reset();
    dir_ = std::make_unique<QTemporaryDir>();
    asked_.clear();
    app_ = std::make_unique<GuiApp>(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app_->window.get()));
}

qint64 TestConversationTransfer::makeBranchyConversation(ConversationStore& store) {
    const Conversation c = *store.createConversation("Trip to Kyoto", "You are a travel guide.", "kyoto-trip");
    (void)store.setSettings(c.id, R"({"temperature":0.3,"top_k":20})");
    (void)store.setModel(c.id, "/models/smol.gguf");
    const auto reply = [&](int64_t parent, const char* text, bool complete, int generated) {
        const Message m = *store.appendMessage(c.id, parent, ChatRole::Assistant, text, complete);
        GenerationStats stats;
        stats.promptTokens = 24;
        stats.generatedTokens = generated;
        stats.ttftMs = 31.5;
        stats.decodeTokensPerSecond = 88.25;
        stats.finishReason = complete ? "eos" : "";
        (void)store.updateMessage(m.id, text, complete, &stats);
        return m.id;
    };
    const int64_t u1 = store.appendMessage(c.id, 0, ChatRole::User, "What should I see in Kyoto?")->id;
    reply(u1, "Fushimi Inari at dawn.", true, 7);
    const int64_t a1b = reply(u1, "The moss garden of Saiho-ji.", true, 9);  // regenerated
    const int64_t u2 = store.appendMessage(c.id, a1b, ChatRole::User, "How do I get there from the station?")->id;
    reply(u2, "Take the Hankyu line to", false, 5);  // interrupted
    const int64_t u1b = store.appendMessage(c.id, 0, ChatRole::User, "What should I eat in Kyoto?")->id;  // edited
    reply(u1b, "Yudofu near Nanzen-ji.", true, 6);
    (void)store.switchBranch(a1b);
    return c.id;
}

TransferOutcome TestConversationTransfer::run(GuiApp& app, QAction* action, const TransferActions::FileChoice& answer) {
    TransferActions* transfers = app.window->transfers();
    transfers->setFileChooser([this, answer](TransferActions::Dialog d, const QString&, const QStringList&) {
        asked_.append(d);
        return answer;
    });
    QSignalSpy finished(&transfers->transfer(), &ConversationTransfer::finished);
    // The GUI thread's longest gap between the ticks of a 2 ms timer, and the trigger itself.
    QElapsedTimer sinceTick;
    QTimer tick;
    tick.setInterval(2);
    connect(&tick, &QTimer::timeout, &tick, [&] {
        longestStallMs_ = std::max(longestStallMs_, static_cast<double>(sinceTick.nsecsElapsed()) / 1e6);
        sinceTick.restart();
    });
    longestStallMs_ = 0;
    QElapsedTimer trigger;
    trigger.start();
    action->trigger();
    longestStallMs_ = static_cast<double>(trigger.nsecsElapsed()) / 1e6;
    sinceTick.start();
    tick.start();
    if (finished.isEmpty() && !finished.wait(60000)) return {};
    tick.stop();
    transfers->setFileChooser({});
    return finished.first().first().value<TransferOutcome>();
}

// Export as JSON, delete, import: the same tree, texts, statistics, settings and active branch;
// the window opens it, shows its active branch, and search finds it.
void TestConversationTransfer::roundTripWithBranches() {
    GuiApp& app = *app_;
    const qint64 id = makeBranchyConversation(*app.store);
    QVERIFY(app.conversations->list()->refresh());
    app.conversations->openConversation(id);
    const QString before = shape(*app.store, id);
    TransferActions* t = app.window->transfers();
    QVERIFY(t->exportConversationAction()->isEnabled());
    // The Hearth menu lists the three actions.
    auto* menu = app.window->findChild<QMenu*>("hearthMenu");
    QVERIFY(menu->actions().contains(t->exportConversationAction()) && menu->actions().contains(t->exportAllAction()) &&
            menu->actions().contains(t->importAction()));
    const TransferOutcome out =
        run(app, t->exportConversationAction(), {path("kyoto.json"), "Hearth JSON, every branch and setting (*.json)"});
    QCOMPARE(out.problem, TransferOutcome::Problem::None);
    QCOMPARE(asked_, QList{TransferActions::Dialog::ExportConversation});
    QCOMPARE(out.conversations, QList<qint64>{id});
    QVERIFY(app.window->statusBar()->currentMessage().contains("kyoto.json"));
    const QJsonObject file = QJsonDocument::fromJson(readFile(path("kyoto.json"))).object();
    QCOMPARE(file.value("format").toString(), QString("hearth.conversation"));
    QCOMPARE(file.value("messages").toArray().size(), 7);

    app.conversations->deleteConversation(id);
    QCOMPARE(app.conversations->list()->rowCount(), 0);
    QVERIFY(!t->exportConversationAction()->isEnabled());  // nothing open

    const TransferOutcome in = run(app, t->importAction(), {path("kyoto.json"), {}});
    QCOMPARE(in.problem, TransferOutcome::Problem::None);
    QCOMPARE(in.conversations.size(), 1);
    QCOMPARE(in.nMessages, qint64{7});
    const qint64 copy = in.conversations.front();
    QCOMPARE(shape(*app.store, copy), before);
    QCOMPARE(app.conversations->list()->rowCount(), 1);
    QCOMPARE(app.conversations->current(), copy);
    QVERIFY2(app.window->statusBar()->currentMessage().contains("(7 messages)"),
             qPrintable(app.window->statusBar()->currentMessage()));
    // The window shows the active branch.
    QStringList shown;
    for (int r = 0; r < app.messages()->rowCount(); ++r) shown << app.rowText(r);
    QCOMPARE(shown.join(" / "),
             QString("What should I see in Kyoto? / The moss garden of Saiho-ji. / How do I get "
                     "there from the station? / Take the Hankyu line to"));
    // Searchable, by the text of a branch that is not shown too.
    app.conversations->search("Yudofu");
    QCOMPARE(app.conversations->list()->rowCount(), 1);
    QCOMPARE(qint64(app.conversations->list()->idAt(0)), copy);
    app.conversations->search("");
    // No KV came with it: it is computed on first use.
    QCOMPARE(*app.store->kv().blockCount(), int64_t{0});
}

// The save dialog's filter picks the format of a name without a suffix; a suffix that names a
// format wins.
void TestConversationTransfer::markdownByFilter() {
    GuiApp& app = *app_;
    const qint64 id = makeBranchyConversation(*app.store);
    QVERIFY(app.conversations->list()->refresh());
    app.conversations->openConversation(id);
    QAction* action = app.window->transfers()->exportConversationAction();
    QCOMPARE(run(app, action, {path("kyoto"), "Markdown, the shown branch (*.md)"}).problem,
             TransferOutcome::Problem::None);
    const QString md = QString::fromUtf8(readFile(path("kyoto.md")));
    QVERIFY2(md.startsWith("# Trip to Kyoto\n\n**System:** You are a travel guide.\n\n## User\n\nWhat should I see"),
             qPrintable(md));
    QVERIFY(md.contains("The moss garden of Saiho-ji.") && md.contains("## Assistant (incomplete)"));
    QVERIFY(!md.contains("Yudofu"));  // another branch
    QCOMPARE(run(app, action, {path("kyoto2"), "Hearth JSON, every branch and setting (*.json)"}).problem,
             TransferOutcome::Problem::None);
    QCOMPARE(QJsonDocument::fromJson(readFile(path("kyoto2.json"))).object().value("format").toString(),
             QString("hearth.conversation"));
    QCOMPARE(run(app, action, {path("notes.md"), "Hearth JSON, every branch and setting (*.json)"}).problem,
             TransferOutcome::Problem::None);
    QVERIFY(readFile(path("notes.md")).startsWith("# Trip to Kyoto"));
}

void TestConversationTransfer::exportAllAndImportAll() {
    GuiApp& app = *app_;
    const qint64 a = makeBranchyConversation(*app.store);
    const Conversation b = *app.store->createConversation("Second");
    (void)app.store->appendMessage(b.id, 0, ChatRole::User, "Only a question");
    QVERIFY(app.conversations->list()->refresh());
    const QStringList before = {shape(*app.store, a), shape(*app.store, b.id)};
    TransferActions* t = app.window->transfers();
    const TransferOutcome out = run(app, t->exportAllAction(), {path("all"), {}});
    QCOMPARE(out.problem, TransferOutcome::Problem::None);
    QCOMPARE(out.conversations.size(), 2);
    QVERIFY(QFileInfo::exists(path("all.json")));
    app.conversations->deleteConversation(a);
    app.conversations->deleteConversation(b.id);
    const TransferOutcome in = run(app, t->importAction(), {path("all.json"), {}});
    QCOMPARE(in.problem, TransferOutcome::Problem::None);
    QCOMPARE(in.conversations.size(), 2);
    QStringList after;
    for (qint64 id : in.conversations) after << shape(*app.store, id);
    std::sort(after.begin(), after.end());
    QStringList expected = before;
    std::sort(expected.begin(), expected.end());
    QCOMPARE(after, expected);
    QCOMPARE(app.conversations->list()->rowCount(), 2);
}

void TestConversationTransfer::importsChatGptAndClaude() {
    GuiApp& app = *app_;
    QVERIFY(writeFile(path("chatgpt-conversations.json"), kChatGpt));
    QVERIFY(writeFile(path("claude-conversations.json"), kClaude));
    QAction* import = app.window->transfers()->importAction();
    const TransferOutcome chatGpt = run(app, import, {path("chatgpt-conversations.json"), {}});
    QCOMPARE(chatGpt.problem, TransferOutcome::Problem::None);
    QCOMPARE(shape(*app.store, chatGpt.conversations.value(0)),
             QStringLiteral(R"(user: How often should I feed a sourdough starter? [1 1718000001000 0/0 ]
  assistant: Once a day at room temperature. [1 1718000002000 0/0 ]
  assistant: Twice a day when it is warm; weekly in the fridge. [1 1718000003000 0/0 ]
active: How often should I feed a sourdough starter? / Once a day at room temperature.
title: Sourdough starter
handle: 
system: 
model: 
settings: {})"));
    const TransferOutcome claude = run(app, import, {path("claude-conversations.json"), {}});
    QCOMPARE(claude.problem, TransferOutcome::Problem::None);
    QCOMPARE(shape(*app.store, claude.conversations.value(0)),
             QStringLiteral(R"(user: My bike chain squeaks. What should I use on it? [1 1717236000000 0/0 ]
  assistant: A dry PTFE chain lube, then wipe off the excess. [1 1717236004000 0/0 ]
active: My bike chain squeaks. What should I use on it? / A dry PTFE chain lube, then wipe off the excess.
title: Bike chain
handle: 
system: 
model: 
settings: {})"));
    QCOMPARE(app.conversations->list()->rowCount(), 2);
    QCOMPARE(app.conversations->current(), claude.conversations.value(0));
    app.conversations->search("sourdough");
    QCOMPARE(app.conversations->list()->rowCount(), 1);
}

void TestConversationTransfer::brokenFileChangesNothing_data() {
    QTest::addColumn<QByteArray>("bytes");  // empty: no file
    QTest::addColumn<QString>("said");
    QTest::addColumn<QString>("detail");
    const QString notRead =
        "is not a conversation export that Hearth can read, or it is damaged, so nothing was "
        "imported";
    QTest::newRow("missing") << QByteArray() << "Could not read "
                             << "No such file or directory";
    QTest::newRow("truncated") << QByteArray(R"({"format": "hearth.conversation", "version": 1, "messages": [{"id)")
                               << notRead << "is not JSON";
    QTest::newRow("parent after child")
        << QByteArray(R"({"format": "hearth.conversation", "version": 1, "title": "x", "messages": [
             {"id": 1, "parent": 0, "role": "user", "text": "first"},
             {"id": 2, "parent": 3, "role": "assistant", "text": "orphan"},
             {"id": 3, "parent": 1, "role": "assistant", "text": "late parent"}]})")
        << notRead << "conversation message 2 has a parent that does not come before it";
    // The second conversation of a ChatGPT export is broken: the first is not imported either.
    QTest::newRow("chatgpt second broken")
        << QByteArray(R"([{"title": "fine", "current_node": "a", "mapping": {"a": {"id": "a", "parent": null,
             "children": [], "message": {"author": {"role": "user"}, "content": {"parts": ["hello"]}}}}},
           {"title": "x", "current_node": "a", "mapping": {"a": {"id": "a", "parent": null,
             "children": ["gone"], "message": null}}}])")
        << notRead << "ChatGPT conversation 2 node a has a child that is not in the mapping";
    QTest::newRow("unknown app") << QByteArray(R"([{"messages": [{"role": "user", "content": "hi"}]}])") << notRead
                                 << "is not a Hearth, ChatGPT or Claude export";
}

void TestConversationTransfer::brokenFileChangesNothing() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, said);
    QFETCH(QString, detail);
    GuiApp& app = *app_;
    const qint64 id = makeBranchyConversation(*app.store);
    QVERIFY(app.conversations->list()->refresh());
    app.conversations->openConversation(id);
    const std::string everything = *exportAllConversationsJson(*app.store);
    const QString file = path("broken.json");
    if (!bytes.isEmpty()) QVERIFY(writeFile(file, bytes));
    const TransferOutcome out = run(app, app.window->transfers()->importAction(), {file, {}});
    QVERIFY(out.problem != TransferOutcome::Problem::None);
    QPointer<QMessageBox> box = app.window->findChild<QMessageBox*>("transferError");
    QVERIFY(box);
    QVERIFY(box->isVisible());
    QCOMPARE(box->windowTitle(), QString("Import failed"));
    QVERIFY2(box->text().contains(said), qPrintable(box->text()));
    QVERIFY2(box->detailedText().contains(detail), qPrintable(box->detailedText()));
    QCOMPARE(*exportAllConversationsJson(*app.store), everything);  // nothing changed
    QCOMPARE(app.conversations->list()->rowCount(), 1);
    QCOMPARE(app.conversations->current(), id);
    box->close();
    QTRY_VERIFY(!box);
}

// The sidebar's context menu: Export… on a conversation asks for the same file and exports it.
void TestConversationTransfer::contextMenuExports() {
    GuiApp& app = *app_;
    const qint64 id = makeBranchyConversation(*app.store);
    QVERIFY(app.conversations->list()->refresh());
    app.window->transfers()->setFileChooser(
        [this](TransferActions::Dialog d, const QString& suggested, const QStringList& filters) {
            asked_.append(d);
            return TransferActions::FileChoice{path("from-menu"), filters.value(1)};
        });
    QSignalSpy finished(&app.window->transfers()->transfer(), &ConversationTransfer::finished);
    auto* list = app.window->sidebar()->findChild<QListView*>("conversationList");
    QStringList offered;
    QTimer::singleShot(100, this, [&offered] {
        auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
        if (!menu) return;
        QAction* exportOne = nullptr;
        for (QAction* a : menu->actions()) {
            offered << a->text();
            if (a->text() == "Export…") exportOne = a;
        }
        menu->close();
        if (exportOne) exportOne->trigger();
    });
    emit list->customContextMenuRequested(list->visualRect(app.conversations->list()->index(0)).center());
    QVERIFY2(finished.wait(20000), qPrintable(offered.join(", ")));
    QCOMPARE(offered.join(", "), QString("Rename…, Delete…, , Export…, Export all…, Import…"));
    QCOMPARE(asked_, QList{TransferActions::Dialog::ExportConversation});
    QCOMPARE(finished.first().first().value<TransferOutcome>().conversations, QList<qint64>{id});
    QCOMPARE(QJsonDocument::fromJson(readFile(path("from-menu.json"))).object().value("title").toString(),
             QString("Trip to Kyoto"));
}

// The database file was deleted while Hearth runs: an import does not open a new, empty database
// in its place; the window says so and offers to save a copy of what it has.
void TestConversationTransfer::movedDatabaseIsNotMadeAgain() {
    GuiApp& app = *app_;
    QVERIFY(writeFile(path("claude.json"), kClaude));
    const QString db = app.conversations->databasePath();
    QTest::qWait(300);  // the engine thread opens its own connection at start (a queued call)
    QVERIFY(QFile::remove(db));
    const TransferOutcome out = run(app, app.window->transfers()->importAction(), {path("claude.json"), {}});
    QCOMPARE(out.problem, TransferOutcome::Problem::Database);
    // Had the engine thread not opened its connection yet, it made the file again: then the
    // import must not be in it.
    if (QFileInfo::exists(db)) QVERIFY((*ConversationStore::open(db.toStdString()))->listConversations()->empty());
    QPointer<QMessageBox> box = app.window->findChild<QMessageBox*>("transferError");
    QVERIFY(box);
    QVERIFY2(box->text().contains("could not be saved, so nothing was imported"), qPrintable(box->text()));
    bool offered = false;
    for (int r = 0; r < app.messages()->rowCount(); ++r)
        offered = offered || app.messages()->row(r)->action == "save-copy";
    QVERIFY(offered);
    box->close();
    QTRY_VERIFY(!box);
}

// 1,000 messages (500 turns of ~300 characters) out and in, on the worker thread; the GUI thread
// stays responsive (the longest gap between its timer ticks, the list refresh and the opening of
// the imported conversation included).
void TestConversationTransfer::thousandMessagesOffTheGuiThread() {
    GuiApp& app = *app_;
    const Conversation c = *app.store->createConversation("Long");
    int64_t parent = 0;
    const QString filler = QString("lorem ipsum dolor sit amet, ").repeated(10);
    for (int i = 0; i < 1000; ++i)
        parent = app.store
                     ->appendMessage(c.id, parent, i % 2 ? ChatRole::Assistant : ChatRole::User,
                                     QStringLiteral("%1 %2").arg(i).arg(filler).toStdString())
                     ->id;
    QVERIFY(app.conversations->list()->refresh());
    app.conversations->openConversation(c.id);
    const QString before = shape(*app.store, c.id);
    TransferActions* t = app.window->transfers();
    const TransferOutcome out = run(app, t->exportConversationAction(), {path("long.json"), {}});
    QCOMPARE(out.problem, TransferOutcome::Problem::None);
    const double exportStall = longestStallMs_;
    app.conversations->deleteConversation(c.id);
    const TransferOutcome in = run(app, t->importAction(), {path("long.json"), {}});
    QCOMPARE(in.problem, TransferOutcome::Problem::None);
    QCOMPARE(in.nMessages, qint64{1000});
    QCOMPARE(shape(*app.store, in.conversations.value(0)), before);
    QCOMPARE(app.messages()->rowCount(), 1000);
    qInfo(
        "1,000 messages (%lld KB of JSON): export %.1f ms, import %.1f ms on the worker thread; longest GUI-thread "
        "stall %.1f ms during the export, %.1f ms during the import (list refresh and opening the 1,000 rows "
        "included)",
        static_cast<long long>(QFileInfo(path("long.json")).size() / 1024), out.workMs, in.workMs, exportStall,
        longestStallMs_);
    // A generous bound for a loaded machine: the stall is the opening of the conversation, not the import.
    QVERIFY2(longestStallMs_ < 2000, qPrintable(QString::number(longestStallMs_)));
}

// An imported conversation continues like any other: the next message goes under its active
// leaf, and the reply's KV is computed (nothing to restore: none came with the file).
void TestConversationTransfer::importedConversationContinues() {
    GuiApp& app = *app_;
    QVERIFY(writeFile(path("claude.json"), kClaude));
    const TransferOutcome in = run(app, app.window->transfers()->importAction(), {path("claude.json"), {}});
    QCOMPARE(in.problem, TransferOutcome::Problem::None);
    const qint64 id = in.conversations.value(0);
    const int64_t leaf = (*app.store->conversation(id))->activeLeafId;
    ChatSettings s;
    s.maxTokens = 8;
    app.settings.setChatDefaults(s);
    app.window->loadModel(smallModel(dir_->path()));
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 20000);
    QTRY_VERIFY(app.sendButton()->isEnabled());
    QCOMPARE(app.conversations->current(), id);
    typeAndSend(app, "And for rain?");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating() && app.store->activeBranch(id)->size() == 4 &&
                                 app.store->activeBranch(id)->back().complete,
                             60000);
    const auto branch = *app.store->activeBranch(id);
    QCOMPARE(branch.size(), size_t{4});
    QCOMPARE(branch[2].text, std::string("And for rain?"));
    QCOMPARE(branch[2].parentId, leaf);
    QCOMPARE(branch[3].role, ChatRole::Assistant);
    QVERIFY(branch[3].complete);
    QVERIFY(branch[3].stats.generatedTokens > 0);
    QVERIFY2(branch[3].stats.promptTokens > 20, "the prompt holds the imported turns");
    QCOMPARE(branch[3].stats.kvRestoredTokens, 0);
}

// In zh_CN the actions and the error box speak Chinese.
void TestConversationTransfer::saysItInChinese() {
    QTranslator translator;
    if (!translator.load(":/i18n/hearth_zh_CN.qm")) QSKIP("the zh_CN catalogue is not built in");
    QCoreApplication::installTranslator(&translator);
    app_.reset();
    app_ = std::make_unique<GuiApp>(dir_->path());
    GuiApp& app = *app_;
    TransferActions* t = app.window->transfers();
    QCOMPARE(t->exportConversationAction()->text(), QString("导出对话(&E)…"));
    QCOMPARE(t->exportAllAction()->text(), QString("导出全部对话(&A)…"));
    QCOMPARE(t->importAction()->text(), QString("导入对话(&I)…"));
    QVERIFY(writeFile(path("broken.json"), "{"));
    const TransferOutcome out = run(app, t->importAction(), {path("broken.json"), {}});
    QCOMPARE(out.problem, TransferOutcome::Problem::NotConversations);
    QPointer<QMessageBox> box = app.window->findChild<QMessageBox*>("transferError");
    QVERIFY(box);
    QCOMPARE(box->windowTitle(), QString("导入失败"));
    QVERIFY2(box->text().contains("不是 Hearth 能读取的对话导出文件") && box->text().contains("未导入任何内容"),
             qPrintable(box->text()));
    box->close();
    QTRY_VERIFY(!box);
    app_.reset();
    QCoreApplication::removeTranslator(&translator);
}

// An import that ends while a reply is being written adds its conversations to the list but
// does not open them: that would stop the reply, which the user did not ask for. The import is
// started from the handler of the reply's first streamed text; SmolLM2 when fetched (a reply of
// 60 tokens takes about a second), else the small model with a reply as long as its context.
void TestConversationTransfer::importLeavesAReplyAlone() {
    GuiApp& app = *app_;
    QVERIFY(writeFile(path("claude.json"), kClaude));
    const QString smol = modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
    const QString model = QFileInfo::exists(smol) ? smol : smallModel(dir_->path());
    ChatSettings s;
    s.maxTokens = model == smol ? 60 : 4000;
    app.settings.setChatDefaults(s);
    app.window->loadModel(model);
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value() && app.models->model()->file.path == model, 30000);
    app.conversations->newConversation();
    const qint64 chat = app.conversations->current();
    QTRY_VERIFY(app.sendButton()->isEnabled());
    ConversationTransfer& transfer = app.window->transfers()->transfer();
    QSignalSpy finished(&transfer, &ConversationTransfer::finished);
    bool started = false, generatingAtImport = false;
    qint64 openAtImport = 0;
    connect(&transfer, &ConversationTransfer::finished, this, [&] {
        generatingAtImport = app.replies->generating();
        openAtImport = app.conversations->current();
    });
    connect(app.messages(), &QAbstractItemModel::dataChanged, this, [&] {
        if (started || app.messages()->rowCount() < 2 || app.rowText(1).isEmpty()) return;
        started = true;
        QVERIFY(transfer.importFile(path("claude.json")));
    });
    typeAndSend(app, "Tell me a story about a fox.");
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.first().first().value<TransferOutcome>().problem, TransferOutcome::Problem::None);
    QCOMPARE(app.conversations->list()->rowCount(), 2);
    qInfo("the reply was still being written when the import ended: %s", generatingAtImport ? "yes" : "no");
    if (generatingAtImport) QCOMPARE(openAtImport, chat);
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 60000);
    const auto branch = *app.store->activeBranch(chat);
    QCOMPARE(branch.size(), size_t{2});
    QVERIFY2(branch[1].stats.finishReason != "cancelled", branch[1].stats.finishReason.c_str());
}

QTEST_MAIN(TestConversationTransfer)
#include "test_conversation_transfer.moc"
