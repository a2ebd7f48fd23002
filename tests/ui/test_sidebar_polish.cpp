// Issue 27's sidebar and branch defects, offscreen over conversations written into the store
// (no model needed): search results with a snippet around the match, the match highlighted, a
// match in a branch not shown named as such and opened there; the chosen branch kept across
// chats and restarts, also below another branch point; a rename that leaves the chat in its
// place; right-click marking the menu's chat while the open chat stays the selected one; the
// marker on a reply a crash cut short.
#include <QContextMenuEvent>
#include <QInputDialog>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QRegularExpression>
#include <QTemporaryDir>

#include "tests/ui/gui_app.h"
#include "ui/conversation_item_delegate.h"

using namespace hearth;
using namespace hearth::test;
using Action = MessageDelegate::Action;

class TestSidebarPolish : public QObject {
    Q_OBJECT
private slots:
    void init() { dir_ = std::make_unique<QTemporaryDir>(); }
    void searchShowsASnippetWithTheMatchHighlighted();
    void searchNamesAnotherBranchAndOpensIt();
    void snippetEdges();
    void chosenBranchIsRemembered();
    void renamingLeavesTheChatInPlace();
    void rightClickMarksTheMenusChatOnly();
    void interruptedReplyIsMarked();

private:
    QString db() const { return dir_->path() + "/chats.sqlite"; }
    std::unique_ptr<ConversationStore> openStore() { return std::move(*ConversationStore::open(db().toStdString())); }
    std::unique_ptr<QTemporaryDir> dir_;
};

static QListView* listView(GuiApp& app) { return app.window->findChild<QListView*>("conversationList"); }

static void search(GuiApp& app, const QString& text) {
    auto* field = app.window->findChild<QLineEdit*>("searchField");
    field->setText(text);
    QTRY_COMPARE(app.conversations->list()->filter(), text);  // after the typing pause
}

static int messageRows(GuiApp& app) {
    int n = 0;
    for (int i = 0; i < app.messages()->rowCount(); ++i) n += !app.messages()->row(i)->isNotice();
    return n;
}

static QImage rowImage(QListView* list, int row) {
    return list->viewport()->grab(list->visualRect(list->model()->index(row, 0))).toImage();
}

void TestSidebarPolish::searchShowsASnippetWithTheMatchHighlighted() {
    {
        auto s = openStore();
        auto c = s->createConversation("Breakfast");
        auto u = s->appendMessage(c->id, 0, ChatRole::User,
                                  "I would like an egg for breakfast tomorrow morning, please tell me how long "
                                  "to boil it for a Soft Yolk that is still runny, and whether salt matters.");
        QVERIFY(u && s->appendMessage(c->id, u->id, ChatRole::Assistant, "About six minutes."));
        QVERIFY(s->createConversation("Trains in Japan"));
    }
    GuiApp app(dir_->path());
    ConversationListModel* list = app.conversations->list();
    QCOMPARE(list->rowCount(), 2);
    search(app, "soft yolk");
    QCOMPARE(list->rowCount(), 1);
    const QModelIndex row = list->index(0);
    QCOMPARE(row.data().toString(), QString("Breakfast"));  // the title stays the row's text
    const QString snippet = row.data(ConversationListModel::SnippetRole).toString();
    const int start = row.data(ConversationListModel::MatchStartRole).toInt();
    const int length = row.data(ConversationListModel::MatchLengthRole).toInt();
    QCOMPARE(snippet.mid(start, length), QString("Soft Yolk"));  // as written, whatever the case typed
    QVERIFY2(snippet.size() < 120 && snippet.contains("boil it for a Soft Yolk that is"), qPrintable(snippet));
    QVERIFY(!snippet.contains("I would like"));  // around the match, not the message's start
    QCOMPARE(row.data(ConversationListModel::WhereRole).toString(), QString());  // in the branch shown

    // Drawn: the match has the highlight behind it, and nothing else in the row has.
    QListView* view = listView(app);
    auto* delegate = qobject_cast<ConversationItemDelegate*>(view->itemDelegate());
    QVERIFY(delegate);
    view->clearSelection();
    view->setCurrentIndex({});
    const QImage image = rowImage(view, 0);
    QStyleOptionViewItem option;
    option.initFrom(view->viewport());
    option.rect = QRect(QPoint(0, 0), view->visualRect(row).size());
    const QRect match = delegate->matchRect(option, row);
    QVERIFY(!match.isEmpty());
    const QRgb mark = delegate->matchBackground(view->palette()).rgb();
    int inside = 0, outside = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if (image.pixel(x, y) == mark) ++(match.contains(x, y) ? inside : outside);
    QVERIFY2(inside > match.width() * match.height() / 4, qPrintable(QString("%1 marked inside").arg(inside)));
    QCOMPARE(outside, 0);

    search(app, "");
    QCOMPARE(list->rowCount(), 2);
    QCOMPARE(list->index(0).data(ConversationListModel::SnippetRole).toString(), QString());
}

// The snippet's edges: a match at the start, lines joined, a long text cut at spaces around it.
void TestSidebarPolish::snippetEdges() {
    using Match = ConversationListModel::Match;
    Match m = ConversationListModel::snippetAround("Kiwi\n\nis a fruit", "kiwi");
    QCOMPARE(m.snippet, QString("Kiwi is a fruit"));
    QCOMPARE(m.start, 0);
    QCOMPARE(m.length, 4);
    QString words;
    for (int i = 0; i < 40; ++i) words += QString("word%1 ").arg(i);
    m = ConversationListModel::snippetAround(words + "the\tneedle here " + words, "NEEDLE");
    QCOMPARE(m.snippet.mid(m.start, m.length), QString("needle"));
    QVERIFY2(m.snippet.startsWith(QChar(0x2026)) && m.snippet.endsWith(QChar(0x2026)), qPrintable(m.snippet));
    QVERIFY2(m.snippet.contains("word39 the needle here word0"), qPrintable(m.snippet));
    const QRegularExpression wholeWords(QString("^%1word\\d+ .* word\\d+%1$").arg(QChar(0x2026)));
    QVERIFY2(wholeWords.match(m.snippet).hasMatch() && m.snippet.size() < 120, qPrintable(m.snippet));
    // No space near the cut: never half a character (an emoji is two UTF-16 units).
    m = ConversationListModel::snippetAround(QString::fromUtf8("\xF0\x9F\x98\x80").repeated(50) + " x", "x");
    QVERIFY(m.snippet.at(1).isHighSurrogate());
    QCOMPARE(m.snippet.mid(m.start, m.length), QString("x"));
}

// The match is in the first reply's branch, which goes on for many turns; the second reply's
// branch is the one shown. Choosing the result shows the first branch, scrolled to the match.
void TestSidebarPolish::searchNamesAnotherBranchAndOpensIt() {
    qint64 conversation = 0, matched = 0;
    {
        auto s = openStore();
        auto c = s->createConversation("Geography");
        conversation = c->id;
        auto u = s->appendMessage(c->id, 0, ChatRole::User, "What is the capital of France?");
        auto a1 = s->appendMessage(c->id, u->id, ChatRole::Assistant, "Paris.");
        int64_t parent = a1->id;
        for (int i = 0; i < 30; ++i) {
            const bool user = i % 2 == 0;
            const std::string text =
                i == 3 ? "The river through it is the Seine, long and slow." : "Turn " + std::to_string(i);
            auto m = s->appendMessage(c->id, parent, user ? ChatRole::User : ChatRole::Assistant,
                                      text + std::string(user ? "" : "\nline two\nline three\nline four"));
            QVERIFY(m);
            if (i == 3) matched = m->id;
            parent = m->id;
        }
        QVERIFY(s->appendMessage(c->id, u->id, ChatRole::Assistant, "It is Paris, of course."));  // shown
        QVERIFY(s->createConversation("Other"));
    }
    GuiApp app(dir_->path());
    app.window->resize(1100, 720);
    search(app, "seine");
    ConversationListModel* list = app.conversations->list();
    QCOMPARE(list->rowCount(), 1);
    const QModelIndex row = list->index(0);
    QCOMPARE(row.data(ConversationListModel::MatchMessageRole).toLongLong(), matched);
    const QString where = row.data(ConversationListModel::WhereRole).toString();
    QVERIFY2(where.contains("another branch"), qPrintable(where));
    QVERIFY(row.data(Qt::ToolTipRole).toString().contains(where));

    QListView* view = listView(app);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(row).center());
    QCOMPARE(app.conversations->current(), conversation);
    const int shown = app.messages()->rowOfId(matched);
    QVERIFY2(shown >= 0, "the match's branch is not the one shown");
    QCOMPARE(messageRows(app), 32);
    MessageView* messages = app.window->messageView();
    QTRY_VERIFY(messages->viewport()->rect().intersects(messages->visualRect(messages->model()->index(shown, 0))));
    QVERIFY(!messages->viewport()->rect().intersects(
        messages->visualRect(messages->model()->index(messages->model()->rowCount() - 1, 0))));
    // The store shows the same branch after a restart.
    auto active = app.store->activeBranch(conversation);
    QVERIFY(std::any_of(active->begin(), active->end(), [&](const Message& m) { return m.id == matched; }));
}

// u → {a1 → u2 → {b1, b2}, a2}: b1 chosen below a1, then a2, then back to a1 shows b1 again
// (not the newest, b2); after switching chats and after a restart too.
void TestSidebarPolish::chosenBranchIsRemembered() {
    qint64 conversation = 0, other = 0;
    {
        auto s = openStore();
        auto c = s->createConversation("Branches");
        conversation = c->id;
        auto u = s->appendMessage(c->id, 0, ChatRole::User, "question");
        auto a1 = s->appendMessage(c->id, u->id, ChatRole::Assistant, "answer one");
        auto u2 = s->appendMessage(c->id, a1->id, ChatRole::User, "follow-up");
        QVERIFY(s->appendMessage(c->id, u2->id, ChatRole::Assistant, "reply b1"));
        QVERIFY(s->appendMessage(c->id, u2->id, ChatRole::Assistant, "reply b2"));
        QVERIFY(s->appendMessage(c->id, u->id, ChatRole::Assistant, "answer two"));
        other = s->createConversation("Other")->id;
    }
    {
        GuiApp app(dir_->path());
        QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
        app.conversations->openConversation(conversation);
        QCOMPARE(app.rowText(1), QString("answer two"));
        QVERIFY(clickChip(*app.window, 1, Action::PreviousBranch));
        QCOMPARE(app.rowText(1), QString("answer one"));
        QCOMPARE(app.rowText(3), QString("reply b2"));  // the newest below a1: nothing chosen there yet
        QVERIFY(clickChip(*app.window, 3, Action::PreviousBranch));
        QCOMPARE(app.rowText(3), QString("reply b1"));
        QVERIFY(clickChip(*app.window, 1, Action::NextBranch));
        QCOMPARE(app.rowText(1), QString("answer two"));
        QVERIFY(clickChip(*app.window, 1, Action::PreviousBranch));
        QCOMPARE(app.rowText(1), QString("answer one"));
        QCOMPARE(app.rowText(3), QString("reply b1"));  // as chosen
        app.conversations->openConversation(other);
        app.conversations->openConversation(conversation);
        QCOMPARE(app.rowText(1), QString("answer one"));
        QCOMPARE(app.rowText(3), QString("reply b1"));
        QVERIFY(clickChip(*app.window, 1, Action::NextBranch));  // a2 is the branch left open
    }
    GuiApp app(dir_->path());  // a restart
    app.conversations->openConversation(conversation);
    QCOMPARE(app.rowText(1), QString("answer two"));
    QVERIFY(clickChip(*app.window, 1, Action::PreviousBranch));
    QCOMPARE(app.rowText(3), QString("reply b1"));
}

void TestSidebarPolish::renamingLeavesTheChatInPlace() {
    qint64 older = 0;
    {
        auto s = openStore();
        auto a = s->createConversation("Older");
        older = a->id;
        QVERIFY(s->appendMessage(a->id, 0, ChatRole::User, "first"));
        QTest::qWait(5);
        auto b = s->createConversation("Newer");
        QVERIFY(s->appendMessage(b->id, 0, ChatRole::User, "second"));
    }
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    ConversationListModel* list = app.conversations->list();
    QCOMPARE(list->rowOf(older), 1);
    QTimer::singleShot(0, this, [] {
        auto* dialog = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
        QVERIFY(dialog);
        dialog->setTextValue("Renamed");
        dialog->accept();
    });
    app.window->sidebar()->renameAt(1);
    QCOMPARE(list->index(1).data().toString(), QString("Renamed"));
    QCOMPARE(list->rowOf(older), 1);
    // Writing in it is what moves it up.
    QTest::qWait(5);
    QVERIFY(app.store->appendMessage(older, 0, ChatRole::User, "again"));
    QVERIFY(list->refresh());
    QCOMPARE(list->rowOf(older), 0);
}

// Chat 0 is open; the menu is asked for on chat 1.
void TestSidebarPolish::rightClickMarksTheMenusChatOnly() {
    {
        auto s = openStore();
        QVERIFY(s->createConversation("Second"));
        QTest::qWait(5);
        QVERIFY(s->createConversation("First"));
    }
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    QListView* view = listView(app);
    ConversationListModel* list = app.conversations->list();
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(list->index(0)).center());
    QCOMPARE(app.conversations->current(), list->idAt(0));
    const QImage plain = rowImage(view, 1);
    const QPoint at = view->visualRect(list->index(1)).center();
    QModelIndexList selectedDuringMenu;
    QImage duringMenu;
    bool menuShown = false;
    QTimer::singleShot(50, this, [&] {
        auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
        menuShown = menu != nullptr;
        selectedDuringMenu = view->selectionModel()->selectedIndexes();
        duringMenu = rowImage(view, 1);
        if (menu) menu->close();
    });
    QTest::mousePress(view->viewport(), Qt::RightButton, {}, at);
    QContextMenuEvent event(QContextMenuEvent::Mouse, at, view->viewport()->mapToGlobal(at));
    QApplication::sendEvent(view->viewport(), &event);
    QTest::mouseRelease(view->viewport(), Qt::RightButton, {}, at);
    QVERIFY(menuShown);
    QCOMPARE(selectedDuringMenu, QModelIndexList{list->index(0)});  // the open chat stays the selected one
    QVERIFY2(duringMenu != plain, "the chat the menu is for is not marked");
    QCOMPARE(view->selectionModel()->selectedIndexes(), QModelIndexList{list->index(0)});
    QCOMPARE(view->currentIndex().row(), 0);
    QCOMPARE(rowImage(view, 1), plain);  // the mark goes with the menu
    QCOMPARE(app.conversations->current(), list->idAt(0));
}

// A reply a crash cut short (stored incomplete) carries the "interrupted" marker when opened.
void TestSidebarPolish::interruptedReplyIsMarked() {
    qint64 conversation = 0;
    {
        auto s = openStore();
        auto c = s->createConversation("Cut short");
        conversation = c->id;
        auto u = s->appendMessage(c->id, 0, ChatRole::User, "Tell me a story");
        QVERIFY(s->appendMessage(c->id, u->id, ChatRole::Assistant, "Once upon a", /*complete=*/false));
    }
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.conversations->openConversation(conversation);
    const auto hits = app.window->messageView()->hitsAt(1);
    QVERIFY(std::any_of(hits.begin(), hits.end(), [](const MessageDelegate::Hit& h) {
        return h.action == Action::Marker && h.label == "interrupted";
    }));
}

QTEST_MAIN(TestSidebarPolish)
#include "test_sidebar_polish.moc"
