// The engine host feeds the engine's history index (SpecDrafter::History, issue 25): after a
// load, the store's complete user and assistant messages of every conversation (an unfinished
// reply and system text left out); after a reply, that reply and the message it answers.
#include <QTemporaryDir>
#include <QtTest>

#include "app/chat/app_settings.h"
#include "app/engine_host/engine_host.h"
#include "app/store/conversation_store.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

namespace {

struct Fed {
    int64_t documents = 0;
    bool done = false;
};

Fed historyOf(EngineWorker* w) {
    Fed f;
    QMetaObject::invokeMethod(
        w,
        [&] {
            f = {w->historyDocuments(), w->historyFed()};
        },
        Qt::BlockingQueuedConnection);
    return f;
}

}  // namespace

class TestHistoryFeed : public QObject {
    Q_OBJECT
private slots:
    void feedsStoreAndReplies() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString model = dir.filePath("tiny.gguf");
        QVERIFY(test::tinyLlama({}).writeFile(model.toStdString()).has_value());
        const QString db = dir.filePath("store.sqlite");
        int64_t expected = 0;
        {
            auto store = ConversationStore::open(db.toStdString());
            QVERIFY(store.has_value());
            for (int c = 0; c < 12; ++c) {
                auto conv = (*store)->createConversation("chat", "a system prompt");
                QVERIFY(conv.has_value());
                int64_t parent = 0;
                for (int m = 0; m < 4; ++m) {
                    const ChatRole role = m % 2 ? ChatRole::Assistant : ChatRole::User;
                    auto msg = (*store)->appendMessage(conv->id, parent, role,
                                                       "the cat sat on the mat " + std::to_string(c * 10 + m));
                    QVERIFY(msg.has_value());
                    parent = msg->id;
                    ++expected;
                }
                // A reply cut short by a crash: not history.
                QVERIFY((*store)->appendMessage(conv->id, parent, ChatRole::Assistant, "the dog", false).has_value());
            }
        }
        EngineHost host;
        bool loaded = false;
        QObject context;
        QObject::connect(host.worker(), &EngineWorker::modelLoaded, &context,
                         [&](const LoadedModel&) { loaded = true; });
        QString finish;
        QObject::connect(host.worker(), &EngineWorker::replyFinished, &context,
                         [&](const ReplyStats& s) { finish = s.finishReason; });
        host.useKvStore({db, 0});
        host.loadModel(model);
        QTRY_VERIFY_WITH_TIMEOUT(loaded, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(historyOf(host.worker()).done, 30000);
        QCOMPARE(historyOf(host.worker()).documents, expected);
        ReplyRequest r;
        r.turns = {ChatTurn{ChatRole::User, "the cat"}};
        r.settings.maxTokens = 6;
        r.settings.seed = 3;
        host.generate(r);
        QTRY_VERIFY_WITH_TIMEOUT(!finish.isEmpty(), 60000);
        QCOMPARE(historyOf(host.worker()).documents, expected + 2);  // the user's message and the reply
    }

    // The settings' "history" drafter is kept across a restart and asks for SpecDrafter::History.
    void historySetting() {
        QTemporaryDir dir;
        const QString ini = dir.filePath("hearth.ini");
        EngineSettings e;
        e.spec.enabled = true;
        e.spec.drafter = "history";
        AppSettings(ini).setEngine(e);
        const EngineSettings back = AppSettings(ini).engine();
        QCOMPARE(back.spec.drafter, QString("history"));
        QCOMPARE(toSpecOptions(back.spec).drafter, SpecDrafter::History);
    }
};

QTEST_GUILESS_MAIN(TestHistoryFeed)
#include "test_history_feed.moc"
