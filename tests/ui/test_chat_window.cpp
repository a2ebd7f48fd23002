// The chat window driven like a user, offscreen, with a real model on the engine thread:
// send and stream, stop mid-reply, regenerate and edit (branches and the < n/m > switcher),
// search, delete after confirmation, and a restart that finds everything as it was.
#include <QLineEdit>
#include <QListView>
#include <QMessageBox>
#include <QTemporaryDir>

#include "tests/ui/gui_app.h"

using namespace hearth;
using namespace hearth::test;
using Action = MessageDelegate::Action;

class TestChatWindow : public QObject {
    Q_OBJECT
private slots:
    void init();
    void sendsAndStreamsAReply();
    void stopsMidReply();
    void regeneratesAndSwitchesBranches();
    void editsAMessageIntoABranch();
    void searchesAndDeletesConversations();
    void restartFindsEverything();

private:
    void start(GuiApp& app, int maxTokens);
    std::unique_ptr<QTemporaryDir> dir_;
};

void TestChatWindow::init() { dir_ = std::make_unique<QTemporaryDir>(); }

void TestChatWindow::start(GuiApp& app, int maxTokens) {
    ChatSettings s;
    s.maxTokens = maxTokens;
    app.settings.setChatDefaults(s);
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(app.window.get()));  // shortcuts need an active window
    app.window->loadModel(smallModel(dir_->path()));
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 20000);
    QTRY_VERIFY(app.sendButton()->isEnabled());
    app.window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(app.window.get()));
}

void TestChatWindow::sendsAndStreamsAReply() {
    GuiApp app(dir_->path());
    start(app, 300);
    QStringList snapshots;  // the reply's text each time the view was told it changed
    connect(app.messages(), &QAbstractItemModel::dataChanged, this, [&](const QModelIndex& i) {
        const MessageRow* r = app.messages()->row(i.row());
        if (r->role == ChatRole::Assistant && r->streaming && (snapshots.isEmpty() || snapshots.last() != r->text))
            snapshots << r->text;
    });
    typeAndSend(app, "Once upon a time");
    QVERIFY(app.input()->toPlainText().isEmpty());
    QCOMPARE(app.sendButton()->text(), QString("Stop"));
    QTRY_COMPARE_WITH_TIMEOUT(app.sendButton()->text(), QString("Send"), 60000);
    QCOMPARE(app.messages()->rowCount(), 2);
    QCOMPARE(app.rowText(0), QString("Once upon a time"));
    const QString reply = app.rowText(1);
    QVERIFY2(reply.size() > 20, qPrintable(reply));
    QVERIFY2(snapshots.size() >= 2, qPrintable(QString::number(snapshots.size())));  // more than one batch
    for (const QString& s : snapshots) QVERIFY(reply.startsWith(s.left(s.size() - 1)));
    // The title comes from the first message; the reply is saved, complete, with its statistics.
    QCOMPARE(app.window->windowTitle(), QString("Once upon a time — Hearth"));
    const auto stored = app.store->activeBranch(app.conversations->current()).value();
    QCOMPARE(stored.size(), size_t{2});
    QCOMPARE(QString::fromStdString(stored[1].text), reply);
    QVERIFY(stored[1].complete);
    QVERIFY(stored[1].stats.generatedTokens > 0);
    QVERIFY(app.window->findChild<QWidget*>("statusSpeed")->property("text").toString().contains("tok/s"));
}

void TestChatWindow::stopsMidReply() {
    GuiApp app(dir_->path());
    // SmolLM2 when fetched (about 100 tokens/s here), else the small model with a long reply.
    const QString smol = modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
    start(app, 4000);
    if (QFileInfo::exists(smol)) {
        app.window->loadModel(smol);
        QTRY_VERIFY_WITH_TIMEOUT(app.models->model()->file.path == smol, 30000);
    }
    // Esc is pressed from the handler of the update that brings the reply past 10 characters,
    // so it lands while the reply is still streaming even when the machine is slow to poll.
    bool pressed = false, wasGenerating = false;
    connect(app.messages(), &QAbstractItemModel::dataChanged, this, [&] {
        if (pressed || app.messages()->rowCount() < 2 || app.rowText(1).size() <= 10) return;
        pressed = true;
        wasGenerating = app.replies->generating();
        app.input()->setFocus();
        QTest::keyClick(app.input(), Qt::Key_Escape);
    });
    typeAndSend(app, "Tell me a very long story about a dragon.");
    QTRY_VERIFY_WITH_TIMEOUT(pressed, 30000);
    QVERIFY(wasGenerating);
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 5000);
    const auto stored = app.store->activeBranch(app.conversations->current()).value();
    QCOMPARE(QString::fromStdString(stored[1].stats.finishReason), QString("cancelled"));
    QVERIFY(stored[1].stats.generatedTokens < 4000);
    QCOMPARE(QString::fromStdString(stored[1].text), app.rowText(1));
    QCOMPARE(app.sendButton()->text(), QString("Send"));
}

void TestChatWindow::regeneratesAndSwitchesBranches() {
    GuiApp app(dir_->path());
    start(app, 40);
    typeAndSend(app, "The little dog");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    const QString first = app.rowText(1);
    QVERIFY(clickChip(*app.window, 1, Action::Regenerate));
    QVERIFY(app.replies->generating());
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QCOMPARE(app.messages()->rowCount(), 2);
    QCOMPARE(app.messages()->row(1)->siblingCount, 2);
    QCOMPARE(app.messages()->row(1)->siblingIndex, 1);
    const QString second = app.rowText(1);
    QVERIFY(clickChip(*app.window, 1, Action::PreviousBranch));
    QCOMPARE(app.messages()->row(1)->siblingIndex, 0);
    QCOMPARE(app.rowText(1), first);
    QVERIFY(clickChip(*app.window, 1, Action::NextBranch));
    QCOMPARE(app.rowText(1), second);
}

void TestChatWindow::editsAMessageIntoABranch() {
    GuiApp app(dir_->path());
    start(app, 30);
    typeAndSend(app, "A cat sat");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QVERIFY(clickChip(*app.window, 0, Action::Edit));
    QCOMPARE(app.input()->toPlainText(), QString("A cat sat"));
    QVERIFY(app.window->findChild<QWidget*>("editBanner")->isVisible());
    typeAndSend(app, "A bird flew");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QCOMPARE(app.rowText(0), QString("A bird flew"));
    QCOMPARE(app.messages()->row(0)->siblingCount, 2);
    QVERIFY(!app.rowText(1).isEmpty());
    QVERIFY(clickChip(*app.window, 0, Action::PreviousBranch));
    QCOMPARE(app.rowText(0), QString("A cat sat"));  // both versions kept, each with its reply
    QCOMPARE(app.messages()->rowCount(), 2);
}

void TestChatWindow::searchesAndDeletesConversations() {
    GuiApp app(dir_->path());
    start(app, 8);
    for (const char* text : {"Tell me about lighthouses", "Zebra crossing rules"}) {
        app.conversations->newConversation();
        typeAndSend(app, text);
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    }
    auto* list = app.window->findChild<QListView*>("conversationList");
    QCOMPARE(list->model()->rowCount(), 2);
    QCOMPARE(list->model()->index(0, 0).data().toString(), QString("Zebra crossing rules"));  // newest first
    app.input()->setFocus();
    QTest::keyClick(app.input(), Qt::Key_F, Qt::ControlModifier);
    auto* search = app.window->findChild<QLineEdit*>("searchField");
    QVERIFY(search->hasFocus());
    QTest::keyClicks(search, "lighthouse");
    QTRY_COMPARE(list->model()->rowCount(), 1);
    QCOMPARE(list->model()->index(0, 0).data().toString(), QString("Tell me about lighthouses"));
    app.conversations->renameConversation(app.conversations->list()->idAt(0), "Beacons");
    search->clear();
    QTRY_COMPARE(list->model()->rowCount(), 2);
    QTest::keyClicks(search, "lighthouses");  // message text, no longer in any title
    QTRY_COMPARE(list->model()->rowCount(), 1);
    QCOMPARE(list->model()->index(0, 0).data().toString(), QString("Beacons"));
    // Delete asks first; Cancel keeps it, Delete removes it.
    auto answer = [](const QString& button) {
        QTimer::singleShot(0, [button] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            QVERIFY(box);
            for (QAbstractButton* b : box->buttons())
                if (b->text().remove('&') == button) b->click();
        });
    };
    answer("Cancel");
    app.window->sidebar()->deleteAt(0);
    QCOMPARE(list->model()->rowCount(), 1);
    answer("Delete");
    app.window->sidebar()->deleteAt(0);
    QCOMPARE(list->model()->rowCount(), 0);
    search->clear();
    QTRY_COMPARE(list->model()->rowCount(), 1);
}

void TestChatWindow::restartFindsEverything() {
    QString firstReply, secondReply;
    {
        GuiApp app(dir_->path());
        start(app, 20);
        typeAndSend(app, "Lily found a ball");
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
        firstReply = app.rowText(1);
        app.replies->regenerate();
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
        secondReply = app.rowText(1);
        app.conversations->newConversation();
        typeAndSend(app, "Tom ran home");
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    }
    GuiApp app(dir_->path());
    ConversationListModel* list = app.conversations->list();
    QCOMPARE(list->rowCount(), 2);
    QCOMPARE(list->index(0).data().toString(), QString("Tom ran home"));
    QCOMPARE(list->index(1).data().toString(), QString("Lily found a ball"));
    app.conversations->openConversation(list->idAt(1));
    QCOMPARE(app.messages()->rowCount(), 2);
    QCOMPARE(app.rowText(1), secondReply);
    QCOMPARE(app.messages()->row(1)->siblingCount, 2);
    app.replies->switchBranch(app.messages()->row(1)->id, -1);
    QCOMPARE(app.rowText(1), firstReply);
}

QTEST_MAIN(TestChatWindow)
#include "test_chat_window.moc"
