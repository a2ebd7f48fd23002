// KV restore in the window, offscreen with a real model: a conversation is sent, the app objects
// are rebuilt over the same database (a restart: new engine host, new engine), and the next
// reply restores the saved KV (the status line says how much) and equals, token for token
// (greedy), the reply of a copy of the database whose cached model fingerprint was changed: the
// window loads with the cached fingerprint (no hashing), so there the saved KV is refused, the
// status says why, and everything is recomputed.
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QToolButton>
#include <QTemporaryDir>

#include "app/store/kv_block_store.h"
#include "app/store/sqlite_db.h"
#include "tests/ui/gui_app.h"

using namespace hearth;
using namespace hearth::test;

class TestKvRestore : public QObject {
    Q_OBJECT
private slots:
    void restoresAfterRestartAndMatchesRecompute();

private:
    void start(GuiApp& app, const QString& model);
    // Continues the newest conversation with text; returns the reply's stats and text.
    ReplyStats continueNewest(GuiApp& app, const QString& text, QString& reply);
};

void TestKvRestore::start(GuiApp& app, const QString& model) {
    ChatSettings s;
    s.maxTokens = 40;
    s.sampling.temperature = 0;  // greedy: the two continuations must agree token for token
    // stories260K has no chat template: its plain format puts a newline between turns that the
    // first prompt did not end with, so only blocks before the first reply can match. A long
    // system prompt gives the restore whole blocks to find (chat formats such as ChatML restore
    // the reply too: tests/store, bench-restore).
    s.systemPrompt =
        "Once upon a time there was a little girl named Lily. She loved to play outside in the sun "
        "with her big red ball and her friend Tom.";
    app.settings.setChatDefaults(s);
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.window->loadModel(model);
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 30000);
    QTRY_VERIFY(app.sendButton()->isEnabled());
}

ReplyStats TestKvRestore::continueNewest(GuiApp& app, const QString& text, QString& reply) {
    ReplyStats stats;
    bool finished = false;
    connect(app.replies.get(), &ReplyController::replyFinished, this, [&](const ReplyStats& s) {
        stats = s;
        finished = true;
    });
    app.conversations->openConversation(app.conversations->list()->idAt(0));
    const int before = app.messages()->rowCount();
    typeAndSend(app, text);
    [&] { QTRY_VERIFY_WITH_TIMEOUT(finished, 60000); }();
    [&] { QCOMPARE(app.messages()->rowCount(), before + 2); }();
    reply = app.rowText(before + 1);
    return stats;
}

void TestKvRestore::restoresAfterRestartAndMatchesRecompute() {
    QTemporaryDir dir, copy;
    const QString model = smallModel(dir.path());
    {
        GuiApp app(dir.path());
        start(app, model);
        typeAndSend(app, "Once upon a time there was a little dog");
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating() && app.messages()->rowCount() == 2, 60000);
        QVERIFY(!app.rowText(1).isEmpty());
        // The KV is saved on the engine thread right after the reply; it has finished by the
        // time the host is joined (the app's teardown).
    }
    for (const QString& f : {QString("/chats.sqlite"), QString("/settings.ini")})
        QVERIFY(QFile::copy(dir.path() + f, copy.path() + f));
    {
        auto check = ConversationStore::open((dir.path() + "/chats.sqlite").toStdString());
        QVERIFY(check);
        QVERIFY2(*(*check)->kv().blockCount() > 0, "the first reply's KV was saved");
        auto sdb = SqliteDb::open((copy.path() + "/chats.sqlite").toStdString());
        QCOMPARE((*sdb)->queryInt("SELECT count(*) FROM model_fingerprints").value_or(0), int64_t{1});
        QVERIFY((*sdb)->exec("UPDATE model_fingerprints SET fingerprint = '00000000000000000000000000000001'"));
    }

    QString restoredReply, recomputedReply;
    {
        GuiApp app(dir.path());  // the restart: new engine host and engine over the same database
        start(app, model);
        const ReplyStats s = continueNewest(app, "The dog ran home", restoredReply);
        QVERIFY2(s.kvRestoredTokens > 0, qPrintable(s.kvNote));
        const QString status = app.window->findChild<QLabel*>("statusKv")->text();
        QVERIFY2(status.startsWith(QString("KV restored: %1 tokens").arg(QLocale().toString(s.kvRestoredTokens))),
                 qPrintable(status));
        QVERIFY(s.promptTokens > s.kvRestoredTokens);
        qInfo("restored %d of %d prompt tokens; status: %s", s.kvRestoredTokens, s.promptTokens, qPrintable(status));
    }
    {
        GuiApp app(copy.path());  // the same conversation, its KV refused and recomputed
        start(app, model);
        const ReplyStats s = continueNewest(app, "The dog ran home", recomputedReply);
        QCOMPARE(s.kvRestoredTokens, 0);
        QCOMPARE(s.reusedTokens, 0);
        QVERIFY2(s.kvNote.contains("model file differs"), qPrintable(s.kvNote));
        QCOMPARE(s.kvRefusal, KvRefusal::ModelFile);
        // Plain words in the status line (issue 27); the fingerprints behind Details….
        const QString status = app.window->findChild<QLabel*>("statusKv")->text();
        QCOMPARE(status,
                 QString("Saved state was made with another model file; the conversation was read again "
                         "(%1 tokens)")
                     .arg(QLocale().toString(s.promptTokens)));
        auto* details = app.window->findChild<QToolButton*>("statusKvDetails");
        QVERIFY(details && details->isVisible());
        details->click();
        QMessageBox* box = nullptr;
        QTRY_VERIFY((box = app.window->findChild<QMessageBox*>("detailsDialog")) != nullptr);
        QVERIFY2(box->informativeText().contains("model file differs (saved with fingerprint"),
                 qPrintable(box->informativeText()));
        box->close();
    }
    QVERIFY(!restoredReply.isEmpty());
    QCOMPARE(restoredReply, recomputedReply);
}

QTEST_MAIN(TestKvRestore)
#include "test_kv_restore.moc"
