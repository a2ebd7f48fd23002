// Issue 27's window defects, offscreen with a real model: notices and figures that stopped being
// true (a load error after a good load, left-out turns after the context was raised, the previous
// chat's figures, the context of a reopened chat, "saved ~0.0 s"); settings fields that show their
// range and say so when a value is outside it (context length too); the preset box showing the
// active preset and deleting a saved one; the status line fitting at 1100 and 800 px in English
// and Chinese with tokens/s while streaming; Regenerate in an empty chat; the "stopped" marker;
// Quit (Ctrl+Q) in a menu.
#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTranslator>

#include "app/common/memory_fit.h"
#include "app/common/model_info.h"
#include "tests/support/test_env.h"
#include "tests/ui/gui_app.h"
#include "ui/chat_status.h"

using namespace hearth;
using namespace hearth::test;

class TestWindowPolish : public QObject {
    Q_OBJECT
private slots:
    void init() { dir_ = std::make_unique<QTemporaryDir>(); }
    void loadErrorGoesAfterAGoodLoad();
    void leftOutNoticeGoesWhenTheContextIsRaised();
    void switchingChatsClearsTheFigures();
    void reopenedChatShowsItsContext();
    void noSavedSecondsWhenNothingWasSaved();
    void outOfRangeEntriesAreRefusedWithAMessage();
    void contextBelowTheMinimumIsRefused();
    void presetBoxShowsTheActivePresetAndDeletes();
    void contextAndKvMemoryFollowTheModel();
    void statusLineFits_data();
    void statusLineFits();
    void tokensPerSecondWhileStreaming();
    void regenerateNeedsAReply();
    void stoppedReplyIsMarked();
    void quitIsInAMenu();
    void jumpToLatestWhileScrolledUp();

private:
    void start(GuiApp& app, int maxTokens = 24);
    void useSlowerModel(GuiApp& app);
    QLabel* label(GuiApp& app, const char* name) { return app.window->findChild<QLabel*>(name); }
    std::unique_ptr<QTemporaryDir> dir_;
};

void TestWindowPolish::start(GuiApp& app, int maxTokens) {
    ChatSettings s;
    s.maxTokens = maxTokens;
    app.settings.setChatDefaults(s);
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.window->loadModel(smallModel(dir_->path()));
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 20000);
    QTRY_VERIFY(app.sendButton()->isEnabled());
}

// SmolLM2 when fetched (tens of tokens/s here: a reply spans many batches of text), else the
// small model stays (thousands of tokens/s: the tests ask again when a reply was too quick).
void TestWindowPolish::useSlowerModel(GuiApp& app) {
    const QString smol = modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
    if (!QFileInfo::exists(smol)) return;
    app.window->loadModel(smol);
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model()->file.path == smol, 30000);
}

static int noticeCount(GuiApp& app) {
    int n = 0;
    for (int i = 0; i < app.messages()->rowCount(); ++i) n += app.messages()->row(i)->isNotice();
    return n;
}

void TestWindowPolish::loadErrorGoesAfterAGoodLoad() {
    GuiApp app(dir_->path());
    QFile bad(dir_->path() + "/notes.gguf");
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("these are my notes, not a model");
    bad.close();
    app.window->loadModel(bad.fileName());
    QTRY_COMPARE_WITH_TIMEOUT(noticeCount(app), 1, 10000);
    start(app);
    QCOMPARE(noticeCount(app), 0);
    QVERIFY2(!label(app, "statusModel")->text().contains("Cannot load"), qPrintable(label(app, "statusModel")->text()));
}

void TestWindowPolish::leftOutNoticeGoesWhenTheContextIsRaised() {
    GuiApp app(dir_->path());
    EngineSettings e;
    e.contextLength = 128;
    app.settings.setEngine(e);
    start(app);
    auto* notice = app.window->findChild<QLabel*>("contextNotice");
    const QString longText = "The cat and the dog played in the park all day long. ";
    for (int i = 0; i < 6 && notice->isHidden(); ++i) {
        typeAndSend(app, QString::number(i) + " " + longText);
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    }
    QVERIFY(!notice->isHidden());
    QSignalSpy reloaded(app.models.get(), &ModelController::loaded);
    e.contextLength = 0;  // the model's own (512 for stories260K): everything fits again
    app.chatSettings->setEngine(e);
    QTRY_COMPARE_WITH_TIMEOUT(reloaded.count(), 1, 20000);
    QVERIFY2(notice->isHidden(), qPrintable(notice->text()));
}

void TestWindowPolish::switchingChatsClearsTheFigures() {
    GuiApp app(dir_->path());
    start(app);
    typeAndSend(app, "Once upon a time");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QVERIFY(label(app, "statusSpeed")->text().contains("tok/s"));
    QVERIFY(!label(app, "statusKv")->text().isEmpty());
    app.conversations->newConversation();
    QCOMPARE(label(app, "statusSpeed")->text(), QString());
    QCOMPARE(label(app, "statusKv")->text(), QString());
    QCOMPARE(label(app, "statusSpec")->text(), QString());
}

// After a restart the reopened chat shows what its last reply left in the context.
void TestWindowPolish::reopenedChatShowsItsContext() {
    int used = 0;
    {
        GuiApp app(dir_->path());
        start(app);
        ReplyStats stats;
        connect(app.replies.get(), &ReplyController::replyFinished, this, [&](const ReplyStats& s) { stats = s; });
        typeAndSend(app, "Once upon a time");
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
        used = stats.promptTokens + stats.generatedTokens;
        QVERIFY(used > 0);
    }
    GuiApp app(dir_->path());
    start(app);
    app.conversations->openConversation(app.conversations->list()->idAt(0));
    const QString text = label(app, "statusContext")->text();
    QVERIFY2(text.contains(QLocale().toString(used) + " / "), qPrintable(text));
    app.conversations->newConversation();
    QVERIFY2(label(app, "statusContext")->text().contains("context 0 / "), qPrintable(text));
}

void TestWindowPolish::noSavedSecondsWhenNothingWasSaved() {
    ChatStatus status;
    ReplyStats s;
    s.promptTokens = 20, s.generatedTokens = 5, s.contextLength = 512, s.tokensPerSecond = 40;
    s.kvRestoredTokens = 16, s.kvSavedSeconds = 0.01;
    status.replyFinished(s);
    auto* kv = status.findChild<QLabel*>("statusKv");
    QVERIFY2(kv->text().contains("16") && !kv->text().contains("0.0 s"), qPrintable(kv->text()));
    s.kvSavedSeconds = 1.26;
    status.replyFinished(s);
    QVERIFY2(kv->text().contains("1.3 s"), qPrintable(kv->text()));
}

// Types text into a spin box as a user would (replacing what is there) and leaves the field.
template <class Spin>
static void typeInto(Spin* spin, const QString& text) {
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, text);
}

void TestWindowPolish::outOfRangeEntriesAreRefusedWithAMessage() {
    GuiApp app(dir_->path());
    start(app);
    SettingsDialog dialog(*app.chatSettings, {app.chatSettings->conversationSettings(), {}, {}, {}},
                          app.chatSettings->defaultSettings(), app.window.get());
    dialog.show();
    QVERIFY(QTest::qWaitForWindowActive(&dialog));
    auto* message = dialog.findChild<QLabel*>("rangeMessage");
    QVERIFY(message);
    QVERIFY(message->isHidden());
    auto* temperature = dialog.findChild<QDoubleSpinBox*>("param_temperature");
    // Every numeric field shows its range (its maximum, as the field writes numbers) beside it.
    for (QAbstractSpinBox* spin : dialog.findChildren<QAbstractSpinBox*>()) {
        auto* hint = dialog.findChild<QLabel*>("hint_" + spin->objectName());
        QVERIFY2(hint, qPrintable(spin->objectName()));
        const auto* real = qobject_cast<QDoubleSpinBox*>(spin);
        const auto* whole = qobject_cast<QSpinBox*>(spin);
        const QString max =
            real ? QLocale().toString(real->maximum(), 'f', real->decimals()) : QLocale().toString(whole->maximum());
        QVERIFY2(hint->text().contains(max), qPrintable(spin->objectName() + ": " + hint->text()));
    }
    const double before = temperature->value();
    typeInto(temperature, "9.5");
    QCOMPARE(temperature->text(), QString("9.5"));  // not swallowed
    QVERIFY(!message->isHidden());
    QVERIFY2(message->text().contains("Temperature") && message->text().contains("9.5"), qPrintable(message->text()));
    dialog.accept();  // refused while a field holds a value out of range
    QVERIFY(dialog.isVisible());
    QCOMPARE(temperature->value(), before);
    typeInto(temperature, "0.7");
    QVERIFY(message->isHidden());
    auto* topP = dialog.findChild<QDoubleSpinBox*>("param_top_p");
    typeInto(topP, "1.7");
    QVERIFY(!message->isHidden());
    QVERIFY2(message->text().contains("Top-p") && message->text().contains("1.7"), qPrintable(message->text()));
    typeInto(topP, "0.9");
    QVERIFY(message->isHidden());
    dialog.accept();
    QVERIFY(!dialog.isVisible());
    QCOMPARE(dialog.values().chat.sampling.temperature, 0.7f);
}

void TestWindowPolish::contextBelowTheMinimumIsRefused() {
    GuiApp app(dir_->path());
    SettingsDialog dialog(*app.chatSettings, {app.chatSettings->conversationSettings(), {}, {}, {}},
                          app.chatSettings->defaultSettings(), app.window.get());
    dialog.show();
    QVERIFY(QTest::qWaitForWindowActive(&dialog));
    auto* context = dialog.findChild<QSpinBox*>("contextSpin");
    QVERIFY(context);
    auto* message = dialog.findChild<QLabel*>("rangeMessage");
    typeInto(context, "100");
    QVERIFY(!message->isHidden());
    QVERIFY2(message->text().contains("100"), qPrintable(message->text()));
    dialog.accept();
    QVERIFY(dialog.isVisible());
    typeInto(context, "4096");
    QVERIFY(message->isHidden());
    dialog.accept();
    QVERIFY(!dialog.isVisible());
    QCOMPARE(dialog.values().engine.contextLength, 4096);
}

// The settings know the model: the context goes up to its trained context (not 1,048,576), and
// the KV memory of the chosen context and type is shown before loading, for Gemma 3 with what
// its sliding-window layers' own pool saves (the "Long conversations" issue).
void TestWindowPolish::contextAndKvMemoryFollowTheModel() {
    GuiApp app(dir_->path());
    auto gemma = inspectModel(test::modelFile("gemma-3-270m-q4_k_m.gguf"));
    QVERIFY2(gemma, gemma ? "" : gemma.error().message.c_str());
    SettingsDialog dialog(*app.chatSettings, {app.chatSettings->conversationSettings(), {}, {}, {}},
                          app.chatSettings->defaultSettings());
    auto* memory = dialog.findChild<QLabel*>("kvMemory");
    QVERIFY(memory);
    QVERIFY(memory->text().isEmpty());  // no model known: nothing claimed
    dialog.setModel(*gemma);
    auto* context = dialog.findChild<QSpinBox*>("contextSpin");
    QCOMPARE(context->maximum(), gemma->contextLength);
    QVERIFY2(dialog.findChild<QLabel*>("hint_contextSpin")->text().contains(QLocale().toString(gemma->contextLength)),
             qPrintable(dialog.findChild<QLabel*>("hint_contextSpin")->text()));
    context->setValue(32768);
    KvLayout layout = gemma->kvLayout;
    const QString pools = formatBytes(kvCacheBytes(layout, 32768));
    layout.window = 0, layout.windowLayers.clear();
    const QString all = formatBytes(kvCacheBytes(layout, 32768));
    QVERIFY(kvCacheBytes(gemma->kvLayout, 32768) * 3 < kvCacheBytes(layout, 32768));  // the pools save most of it
    QVERIFY2(memory->text().contains(pools) && memory->text().contains(all) &&
                 memory->text().contains(QLocale().toString(32768)),
             qPrintable(memory->text()));
    auto* kvType = dialog.findChild<QComboBox*>("kvTypeCombo");
    QVERIFY(kvType);
    kvType->setCurrentIndex(kvType->findData("q8_0"));
    KvLayout q8 = gemma->kvLayout;
    q8.elementType = KvElementType::Q8_0;
    QVERIFY2(memory->text().contains(formatBytes(kvCacheBytes(q8, 32768))), qPrintable(memory->text()));
    qInfo("%s", qPrintable(memory->text()));
}

void TestWindowPolish::presetBoxShowsTheActivePresetAndDeletes() {
    GuiApp app(dir_->path());
    ChatSettings mine = app.chatSettings->defaultSettings();
    mine.sampling.temperature = 1.3f;
    app.chatSettings->saveUserPreset("Mine", mine);
    {
        SettingsDialog dialog(*app.chatSettings, {app.chatSettings->conversationSettings(), {}, {}, {}},
                              app.chatSettings->defaultSettings());
        auto* box = dialog.findChild<QComboBox*>("presetCombo");
        dialog.applyPreset("Precise");
        QCOMPARE(box->currentText(), QString("Precise"));
        app.chatSettings->setConversationSettings(dialog.values().chat);
    }
    SettingsDialog dialog(*app.chatSettings, {app.chatSettings->conversationSettings(), {}, {}, {}},
                          app.chatSettings->defaultSettings());
    auto* box = dialog.findChild<QComboBox*>("presetCombo");
    QCOMPARE(box->currentText(), QString("Precise"));  // what the conversation uses
    dialog.findChild<QDoubleSpinBox*>("param_temperature")->setValue(1.9);
    QVERIFY(box->currentText() != QString("Precise"));  // edited: no longer that preset
    dialog.applyPreset("Mine");
    QCOMPARE(box->currentText(), QString("Mine"));
    auto* remove = dialog.findChild<QPushButton*>("deletePresetButton");
    QVERIFY(remove);
    QVERIFY(remove->isEnabled());
    dialog.findChild<QDoubleSpinBox*>("param_temperature")->setValue(0.33);
    QCOMPARE(box->currentIndex(), 0);  // "Choose a preset…": nothing to delete
    QVERIFY(!remove->isEnabled());
    dialog.applyPreset("Mine");
    QVERIFY(remove->isEnabled());
    remove->click();
    QVERIFY(!app.chatSettings->userPresetNames().contains("Mine"));
    QCOMPARE(box->findText("Mine"), -1);
    dialog.applyPreset("Balanced");
    QVERIFY(!remove->isEnabled());  // built-in presets stay
}

void TestWindowPolish::statusLineFits_data() {
    QTest::addColumn<int>("width");
    QTest::addColumn<QString>("language");
    QTest::newRow("1100 en") << 1100 << "en";
    QTest::newRow("800 en") << 800 << "en";
    QTest::newRow("1100 zh_CN") << 1100 << "zh_CN";
    QTest::newRow("800 zh_CN") << 800 << "zh_CN";
}

// Every status label shows all of its text in its own box, or shows it elided with the whole
// text in its tooltip; no two overlap and none leaves the window.
void TestWindowPolish::statusLineFits() {
    QFETCH(int, width);
    QFETCH(QString, language);
    QTranslator translator;
    if (language == "zh_CN") {
        if (!translator.load(":/i18n/hearth_zh_CN.qm")) QSKIP("the zh_CN catalogue is not built in");
        QCoreApplication::installTranslator(&translator);
    }
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    auto* status = app.window->findChild<ChatStatus*>();
    LoadedModel m;
    m.file.name = "Smollm2 135M 8k Lc100K Mix1 Ep2 Instruct Extra Long Name";
    m.file.path = "/models/smollm2.gguf";
    m.backend = "CPU (AVX2)";
    m.backendNote = "CUDA driver version is insufficient for CUDA runtime version";
    m.contextLength = 8192;
    status->setModel(m);
    ReplyStats s;
    s.promptTokens = 1204, s.generatedTokens = 300, s.contextLength = 8192;
    s.tokensPerSecond = 123.4, s.ttftMs = 85;
    s.specDrafted = 1000, s.specAccepted = 734;
    s.kvRestoredTokens = 1024, s.kvSavedSeconds = 2.5;
    status->replyFinished(s);
    app.window->resize(width, 720);
    QTRY_COMPARE(app.window->width(), width);
    QCoreApplication::processEvents();
    const QRect window = app.window->rect();
    QList<QLabel*> shown;
    for (QLabel* l : status->findChildren<QLabel*>()) {
        if (!l->isVisible() || l->text().isEmpty()) continue;
        const QRect r(l->mapTo(app.window.get(), QPoint(0, 0)), l->size());
        QVERIFY2(window.contains(r), qPrintable(l->objectName() + " leaves the window"));
        // An eliding label paints shownText(); it must then carry the whole text in its tooltip.
        auto* eliding = dynamic_cast<ElidingLabel*>(l);
        const QString painted = eliding ? eliding->shownText() : l->text();
        if (painted != l->text())
            QVERIFY2(painted.endsWith(QChar(0x2026)) && l->toolTip().contains(l->text()),
                     qPrintable(l->objectName() + ": " + painted + " / " + l->toolTip() + " / " +
                                QString::number(l->width())));
        const int needed =
            l->fontMetrics().horizontalAdvance(painted) + l->contentsMargins().left() + l->contentsMargins().right();
        QVERIFY2(l->wordWrap() || needed <= l->width(),
                 qPrintable(QString("%1 cut: needs %2 px, has %3 (%4)")
                                .arg(l->objectName())
                                .arg(needed)
                                .arg(l->width())
                                .arg(painted)));
        if (l->wordWrap()) QVERIFY2(l->heightForWidth(l->width()) <= l->height(), qPrintable(l->objectName()));
        for (QLabel* other : shown)
            QVERIFY2(!QRect(other->mapTo(app.window.get(), QPoint(0, 0)), other->size()).intersects(r),
                     qPrintable(l->objectName() + " overlaps " + other->objectName()));
        shown.append(l);
    }
    // The model name gives way first, and says in full what it is when elided.
    auto* model = dynamic_cast<ElidingLabel*>(status->findChild<QLabel*>("statusModel"));
    QVERIFY(model);
    if (width == 800) QVERIFY(model->shownText().endsWith(QChar(0x2026)));  // this name does not fit at 800 px
    if (model->shownText() != model->text()) QVERIFY(model->toolTip().contains(m.file.name));
    QVERIFY(shown.size() >= 4);
    QCoreApplication::removeTranslator(&translator);
}

// The figures of the reply in flight change with each batch of text after the first (the first
// batch comes before the first rate); a reply that ended within a few batches is asked again.
void TestWindowPolish::tokensPerSecondWhileStreaming() {
    // The tiny model writes a whole reply within a frame or two: too quick to watch.
    HEARTH_REQUIRE_FILE(modelFile("SmolLM2-135M-Instruct.Q4_1.gguf"));
    GuiApp app(dir_->path());
    start(app, 400);
    useSlowerModel(app);
    auto* speed = label(app, "statusSpeed");
    auto* context = label(app, "statusContext");
    int nBatches = 0;
    bool seenLive = false;
    QSet<QString> contexts;  // the meter moves while the reply grows
    connect(app.messages(), &QAbstractItemModel::dataChanged, this, [&] {
        if (!app.replies->generating()) return;
        ++nBatches;
        if (speed->text().contains("tok/s")) seenLive = true;
        contexts.insert(context->text());
        if (nBatches >= 4 && seenLive && contexts.size() > 2) app.replies->stop();  // seen enough
    });
    for (int i = 0; i < 12 && nBatches < 4; ++i) {
        nBatches = 0, seenLive = false, contexts.clear();
        app.conversations->newConversation();  // a fresh context each time
        typeAndSend(app, "Once upon a time there was a little girl named Lily");
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 60000);
    }
    QVERIFY2(nBatches >= 4, "no reply was long enough to watch");
    QVERIFY(seenLive);
    QVERIFY2(contexts.size() > 2, qPrintable(QStringList(contexts.values()).join(" | ")));
}

void TestWindowPolish::regenerateNeedsAReply() {
    GuiApp app(dir_->path());
    start(app);
    auto* regenerate = app.window->findChild<QPushButton*>("regenerateButton");
    app.conversations->newConversation();
    QVERIFY(!regenerate->isEnabled());
    typeAndSend(app, "Once upon a time");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QVERIFY(regenerate->isEnabled());
    app.conversations->newConversation();
    QVERIFY(!regenerate->isEnabled());
}

void TestWindowPolish::stoppedReplyIsMarked() {
    GuiApp app(dir_->path());
    start(app, 4000);
    useSlowerModel(app);
    QString reason;
    connect(app.replies.get(), &ReplyController::replyFinished, this,
            [&](const ReplyStats& s) { reason = s.finishReason; });
    // Stop at the first text; a reply that ended by itself before Stop landed is asked again.
    auto c = connect(app.messages(), &QAbstractItemModel::dataChanged, this, [&] {
        if (app.replies->generating() && !app.rowText(1).isEmpty()) app.replies->stop();
    });
    typeAndSend(app, "Once upon a time");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    for (int i = 0; i < 5 && reason != "cancelled"; ++i) {
        app.replies->regenerate();
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    }
    disconnect(c);
    QCOMPARE(reason, QString("cancelled"));
    MessageView* view = app.window->messageView();
    const auto hits = view->hitsAt(1);
    const bool marked =
        std::any_of(hits.begin(), hits.end(), [](const MessageDelegate::Hit& h) { return h.label == "stopped"; });
    QVERIFY(marked);
    // Still marked after the conversation is opened again (from the store).
    const qint64 id = app.conversations->current();
    app.conversations->newConversation();
    app.conversations->openConversation(id);
    const auto again = view->hitsAt(1);
    QVERIFY(
        std::any_of(again.begin(), again.end(), [](const MessageDelegate::Hit& h) { return h.label == "stopped"; }));
}

void TestWindowPolish::quitIsInAMenu() {
    GuiApp app(dir_->path());
    QAction* quit = nullptr;
    for (QAction* a : app.window->menuBar()->findChildren<QAction*>())
        if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_Q)) quit = a;
    QVERIFY(quit);
    QSignalSpy closed(app.window.get(), &QObject::destroyed);
    app.window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(app.window.get()));
    QTest::keyClick(app.window.get(), Qt::Key_Q, Qt::ControlModifier);
    QTRY_VERIFY(!app.window->isVisible());
}

void TestWindowPolish::jumpToLatestWhileScrolledUp() {
    GuiApp app(dir_->path());
    start(app, 400);
    app.window->resize(800, 420);
    MessageView* view = app.window->messageView();
    QScrollBar* bar = view->verticalScrollBar();
    typeAndSend(app, "Once upon a time");
    QTRY_VERIFY_WITH_TIMEOUT(bar->maximum() > 100 || !app.replies->generating(), 60000);
    for (int i = 0; i < 8 && bar->maximum() <= 100; ++i) {  // not long enough to scroll yet
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 60000);
        typeAndSend(app, "Tell me more");
        QTRY_VERIFY_WITH_TIMEOUT(bar->maximum() > 100 || !app.replies->generating(), 60000);
    }
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 60000);
    QVERIFY(bar->maximum() > 100);
    auto* jump = view->findChild<QToolButton*>("jumpToLatest");
    QVERIFY(jump);
    QTRY_VERIFY(view->followsEnd());
    QVERIFY(jump->isHidden());
    bar->setValue(0);  // the user scrolls up
    QVERIFY2(jump->isVisible(),
             qPrintable(
                 QString("value %1 of %2, follows %3").arg(bar->value()).arg(bar->maximum()).arg(view->followsEnd())));
    QTest::mouseClick(jump, Qt::LeftButton);
    QVERIFY(view->followsEnd());
    QCOMPARE(bar->value(), bar->maximum());
    QVERIFY(jump->isHidden());
}

QTEST_MAIN(TestWindowPolish)
#include "test_window_polish.moc"
