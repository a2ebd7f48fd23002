// Engine settings that apply without a restart, and the moved-database way forward, offscreen:
// speculative decoding set in the panel reaches each request and gives the reply greedy decoding
// gives without it, with its counts in the status line; a KV disk budget lowered in the panel is
// enforced at once on the engine thread's store connection; when the database file is deleted
// while running, the error offers "Save a copy…", which writes the copy and goes on with it.
#include <QDialogButtonBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QComboBox>
#include <QTemporaryDir>
#include <filesystem>

#include "app/store/kv_block_store.h"
#include "tests/ui/gui_app.h"
#include "ui/settings_dialog.h"

using namespace hearth;
using namespace hearth::test;

namespace {

void useNGram(SettingsDialog* d, int maxDraft) {
    d->findChild<QGroupBox*>("specGroup")->setChecked(true);
    auto* drafter = d->findChild<QComboBox*>("specDrafter");
    drafter->setCurrentIndex(drafter->findData("ngram"));
    d->findChild<QSpinBox*>("specMaxDraft")->setValue(maxDraft);
}

void startGreedy(GuiApp& app) {
    ChatSettings s;
    s.maxTokens = 40;
    s.sampling.temperature = 0;
    app.settings.setChatDefaults(s);
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.window->loadModel(smallModel(QFileInfo(QString::fromStdString(app.store->path())).absolutePath()));
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 30000);
    QTRY_VERIFY(app.sendButton()->isEnabled());
}

qint64 workerBudget(GuiApp& app) {
    qint64 bytes = -2;
    QMetaObject::invokeMethod(
        app.host.worker(), [&] { bytes = app.host.worker()->kvDiskBudgetBytes(); }, Qt::BlockingQueuedConnection);
    return bytes;
}

}  // namespace

class TestEngineSettings : public QObject {
    Q_OBJECT
private slots:
    void speculationReachesTheRequest();
    void defaultDrafterIsTreesFromBoth();
    void speculativeReplyEqualsThePlainOne();
    void lowerDiskBudgetIsEnforcedAtOnce();
    void deletedDatabaseIsSavedAsACopy();
};

// No model needed: the request is built (and refused by the engine host) either way.
void TestEngineSettings::speculationReachesTheRequest() {
    QTemporaryDir dir;
    {
        GuiApp app(dir.path());
        QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
        QCOMPARE(app.settings.engine().spec.enabled, false);
        QVERIFY(editSettings(app, [](SettingsDialog* d) {
            useNGram(d, 99);  // out of range: the spin box holds it at SpecOptions' maximum
            QCOMPARE(d->findChild<QSpinBox*>("specMaxDraft")->value(), SpecSettings::kMaxDraft);
            QVERIFY(!d->findChild<QLineEdit*>("specDraftModel")->isEnabled());  // n-gram needs no file
            QVERIFY(d->findChild<QLabel*>("reloadNote")->text().isEmpty());  // no reload for it
        }));
        QVERIFY(app.replies->send("Once upon a time"));
        const SpecOptions& spec = app.replies->lastRequest().spec;
        QCOMPARE(spec.drafter, SpecDrafter::NGram);
        QCOMPARE(spec.maxDraft, SpecSettings::kMaxDraft);
    }
    GuiApp restarted(dir.path());  // stored with the other engine settings
    QCOMPARE(restarted.settings.engine().spec.enabled, true);
    QVERIFY(editSettings(restarted, [](SettingsDialog* d) {
        QVERIFY(d->findChild<QGroupBox*>("specGroup")->isChecked());
        auto* drafter = d->findChild<QComboBox*>("specDrafter");
        drafter->setCurrentIndex(drafter->findData("draft"));
        QVERIFY(d->findChild<QLineEdit*>("specDraftModel")->isEnabled());
        d->findChild<QLineEdit*>("specDraftModel")->setText("/models/draft.gguf");
        d->findChild<QSpinBox*>("specMaxDraft")->setValue(0);  // below the range: held at 1
    }));
    restarted.conversations->newConversation();
    QVERIFY(restarted.replies->send("Once upon a time"));
    const SpecOptions& spec = restarted.replies->lastRequest().spec;
    QCOMPARE(spec.drafter, SpecDrafter::DraftModel);
    QCOMPARE(spec.draftModelPath, std::string("/models/draft.gguf"));
    QCOMPARE(spec.maxDraft, SpecSettings::kMinDraft);
}

// Switching speculation on without choosing a drafter gives the window's Default: the n-gram
// and history drafters' trees, the policy free to switch it off.
void TestEngineSettings::defaultDrafterIsTreesFromBoth() {
    QTemporaryDir dir;
    GuiApp app(dir.path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    QCOMPARE(app.settings.engine().spec.drafter, QString("default"));
    QVERIFY(editSettings(app, [](SettingsDialog* d) {
        QCOMPARE(d->findChild<QComboBox*>("specDrafter")->currentData().toString(), QString("default"));
        QVERIFY(!d->findChild<QLineEdit*>("specDraftModel")->isEnabled());
        d->findChild<QGroupBox*>("specGroup")->setChecked(true);
    }));
    QVERIFY(app.replies->send("Once upon a time"));
    const SpecOptions& spec = app.replies->lastRequest().spec;
    QCOMPARE(spec.drafter, SpecDrafter::Auto);
    QVERIFY(spec.tree && spec.allowSwitchOff);
    QVERIFY(spec == specAuto(8));
}

// Greedy with n-gram speculation equals greedy without (the verifier keeps exactly the tokens
// the model would choose), and the status line shows the Finish event's counters.
void TestEngineSettings::speculativeReplyEqualsThePlainOne() {
    QTemporaryDir dir;
    GuiApp app(dir.path());
    startGreedy(app);
    typeAndSend(app, "Once upon a time there was a little dog");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 60000);
    const QString plain = app.rowText(1);
    QVERIFY(!plain.isEmpty());
    QVERIFY(editSettings(app, [](SettingsDialog* d) { useNGram(d, 8); }));
    ReplyStats stats;
    connect(app.replies.get(), &ReplyController::replyFinished, this, [&](const ReplyStats& s) { stats = s; });
    app.replies->regenerate();
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 60000);
    QCOMPARE(app.replies->lastRequest().spec.drafter, SpecDrafter::NGram);
    QCOMPARE(app.messages()->rowCount(), 2);  // no error notice
    QCOMPARE(app.rowText(1), plain);
    QVERIFY2(stats.specDrafted > 0, "the Finish event carries the speculation counters");
    QVERIFY(stats.specAccepted >= 0 && stats.specAccepted <= stats.specDrafted);
    const QString expected =
        QStringLiteral("spec: accepted %1 of %2 drafted").arg(stats.specAccepted).arg(stats.specDrafted);
    QCOMPARE(app.window->findChild<QLabel*>("statusSpec")->text(), expected);
    // The Default drafter (trees from the conversation and the history the app fed): the same.
    QVERIFY(editSettings(app, [](SettingsDialog* d) {
        auto* drafter = d->findChild<QComboBox*>("specDrafter");
        drafter->setCurrentIndex(drafter->findData("default"));
    }));
    app.replies->regenerate();
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 60000);
    QCOMPARE(app.replies->lastRequest().spec.drafter, SpecDrafter::Auto);
    QCOMPARE(app.messages()->rowCount(), 2);
    QCOMPARE(app.rowText(1), plain);
}

void TestEngineSettings::lowerDiskBudgetIsEnforcedAtOnce() {
    QTemporaryDir dir;
    GuiApp app(dir.path());
    startGreedy(app);
    typeAndSend(app, "Once upon a time there was a little dog");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(app.store->kv().blockCount().value_or(0) > 0, 20000);  // saved after the reply
    QCOMPARE(workerBudget(app), qint64{2048} << 20);
    const QString modelPath = app.models->model()->file.path;
    QVERIFY(editSettings(app, [](SettingsDialog* d) {
        d->findChild<QSpinBox*>("diskBudgetSpin")->setValue(0);
        QVERIFY(d->findChild<QLabel*>("reloadNote")->text().isEmpty());
    }));
    QCOMPARE(app.settings.engine().kvDiskBudgetMb, 0);
    QCOMPARE(app.window->loadProgress(), nullptr);  // no model reload for a budget
    QCOMPARE(workerBudget(app), qint64{0});
    QTRY_COMPARE_WITH_TIMEOUT(app.store->kv().blockCount().value_or(-1), int64_t{0},
                              20000);  // evicted now, not at the next start
    QCOMPARE(app.rowText(0), QString("Once upon a time there was a little dog"));  // text is never evicted
    QCOMPARE(app.models->model()->file.path, modelPath);
}

// As tests/app/store/test_store_faults deletedWhileRunning: the file and its -wal/-shm removed.
void TestEngineSettings::deletedDatabaseIsSavedAsACopy() {
    QTemporaryDir dir, elsewhere;
    GuiApp app(dir.path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.conversations->newConversation();
    const qint64 conversation = app.conversations->current();
    QVERIFY(app.replies->send("kept before the delete"));  // no model: the reply fails, the message stays
    QTRY_VERIFY(!app.replies->generating());
    const std::string path = app.store->path();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    QVERIFY(!app.replies->send("written after the delete"));
    const int notice = app.messages()->rowCount() - 1;
    QVERIFY(app.messages()->row(notice)->isNotice());
    QVERIFY2(app.rowText(notice).contains("moved or deleted"), qPrintable(app.rowText(notice)));
    QString suggested;
    const QString copy = elsewhere.path() + "/rescued.sqlite";
    app.window->setCopyPathChooser([&](const QString& s) {
        suggested = s;
        return copy;
    });
    QVERIFY(clickChip(*app.window, notice, MessageDelegate::Action::SaveCopy));
    QCOMPARE(suggested, QString::fromStdString(path));
    QCOMPARE(app.conversations->databasePath(), copy);
    QCOMPARE(app.conversations->current(), conversation);
    QCOMPARE(app.rowText(0), QString("kept before the delete"));
    QVERIFY(app.replies->send("written to the copy"));
    QTRY_VERIFY(!app.replies->generating());
    auto reopened = ConversationStore::open(copy.toStdString());  // a fresh connection sees it
    QVERIFY(reopened);
    auto branch = (*reopened)->activeBranch(conversation);
    QVERIFY(branch);
    QStringList texts;
    for (const Message& m : *branch) texts << QString::fromStdString(m.text);
    QVERIFY2(texts.contains("kept before the delete") && texts.contains("written to the copy"),
             qPrintable(texts.join(" | ")));
}

QTEST_MAIN(TestEngineSettings)
#include "test_engine_settings.moc"
