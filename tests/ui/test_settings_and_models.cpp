// The settings panel and the model picker, offscreen with a real model: a temperature set in
// the panel is the one the next request uses (and temperature 0 makes replies repeat exactly);
// per-conversation overrides reset to defaults; a model load is cancelled from its progress
// dialog; the picker lists each file's family, size and quantization and says which ones Hearth
// cannot run and why; a file that is not a model gets a clear message; old turns that no longer fit the
// context are left out and the window says so; the window's title contains "Hearth".
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTemporaryDir>

#include "tests/ui/gui_app.h"
#include "ui/model_picker.h"
#include "ui/settings_dialog.h"

using namespace hearth;
using namespace hearth::test;

class TestSettingsAndModels : public QObject {
    Q_OBJECT
private slots:
    void init() { dir_ = std::make_unique<QTemporaryDir>(); }
    void temperatureFromThePanelIsUsed();
    void cancelsAModelLoad();
    void showsWhyAFileIsNotAModel();
    void pickerTellsWhatEachFileIs();
    void leavesOutOldTurnsThatDoNotFit();

private:
    void start(GuiApp& app);
    std::unique_ptr<QTemporaryDir> dir_;
};

void TestSettingsAndModels::start(GuiApp& app) {
    ChatSettings s;
    s.maxTokens = 24;
    s.sampling.temperature = 1.5f;
    app.settings.setChatDefaults(s);
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    QVERIFY(app.window->windowTitle().contains("Hearth"));
    app.window->loadModel(smallModel(dir_->path()));
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 20000);
    app.window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(app.window.get()));
}

void TestSettingsAndModels::temperatureFromThePanelIsUsed() {
    GuiApp app(dir_->path());
    start(app);
    typeAndSend(app, "Once upon a time");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QCOMPARE(app.replies->lastRequest().settings.sampling.temperature, 1.5f);
    QVERIFY(editSettings(app, [](SettingsDialog* d) {
        auto* temp = d->findChild<QDoubleSpinBox*>("param_temperature");
        temp->clear();
        QTest::keyClicks(temp, "0");
        auto* maxTokens = d->findChild<QDoubleSpinBox*>("param_max_tokens");
        maxTokens->setValue(99999);  // out of range: the spin box holds it at its maximum
        QCOMPARE(maxTokens->value(), 32768.0);
        maxTokens->setValue(24);
    }));
    QVERIFY(app.chatSettings->hasOverrides());
    // Greedy now: two regenerations give the same reply, and the request carried temperature 0.
    app.replies->regenerate();
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QCOMPARE(app.replies->lastRequest().settings.sampling.temperature, 0.0f);
    const QString greedy = app.rowText(1);
    app.replies->regenerate();
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QCOMPARE(app.rowText(1), greedy);
    // Another conversation keeps the defaults; "Reset to defaults" drops the override.
    const qint64 first = app.conversations->current();
    app.conversations->newConversation();
    QCOMPARE(app.chatSettings->conversationSettings().sampling.temperature, 1.5f);
    app.conversations->openConversation(first);
    QVERIFY(editSettings(app, [](SettingsDialog* d) { d->findChild<QPushButton*>("resetButton")->click(); }));
    QVERIFY(!app.chatSettings->hasOverrides());
    QCOMPARE(app.chatSettings->conversationSettings().sampling.temperature, 1.5f);
}

void TestSettingsAndModels::cancelsAModelLoad() {
    GuiApp app(dir_->path());
    start(app);
    const QString loaded = app.models->model()->file.path;
    // A large file (sparse: no disk used) takes long enough to read for Cancel to land.
    QFile big(dir_->path() + "/large.gguf");
    QVERIFY(big.open(QIODevice::WriteOnly) && big.resize(qint64{8} << 30));
    big.close();
    app.window->loadModel(big.fileName());
    QProgressDialog* progress = app.window->loadProgress();
    QVERIFY(progress);
    QTRY_VERIFY_WITH_TIMEOUT(progress->isVisible(), 5000);
    auto* cancel = progress->findChild<QPushButton*>();
    QVERIFY(cancel);
    QTest::mouseClick(cancel, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!app.window->loadProgress(), 20000);
    auto* status = app.window->findChild<QLabel*>("statusModel");
    QVERIFY2(status->text().contains("cancelled"), qPrintable(status->text()));
    QCOMPARE(app.models->model()->file.path, loaded);  // the previous model stays
    typeAndSend(app, "Still here?");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QVERIFY(!app.rowText(1).isEmpty());
}

void TestSettingsAndModels::showsWhyAFileIsNotAModel() {
    GuiApp app(dir_->path());
    QFile bad(dir_->path() + "/notes.gguf");
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("these are my notes, not a model");
    bad.close();
    ModelPicker picker(dir_->path(), bad.fileName());
    auto* facts = picker.findChild<QLabel*>("modelFacts");
    QTRY_VERIFY2(facts->text().contains("cannot be used") && facts->text().contains("not a valid model"),
                 qPrintable(facts->text()));
    QVERIFY(!picker.findChild<QPushButton*>("loadButton")->isEnabled());
    app.window->loadModel(bad.fileName());  // e.g. the last model was replaced by something else
    QTRY_COMPARE_WITH_TIMEOUT(app.messages()->rowCount(), 1, 10000);
    QVERIFY(app.messages()->row(0)->isNotice());
    QVERIFY2(app.rowText(0).contains("Cannot load notes.gguf") && app.rowText(0).contains("Model…"),
             qPrintable(app.rowText(0)));
    QVERIFY(!app.sendButton()->isEnabled());
    QVERIFY(app.window->windowTitle().contains("Hearth"));
}

// Before anything is loaded: a line per file with what it is, and for the chosen one its facts
// and loading's verdict; a file Hearth cannot run cannot be loaded.
void TestSettingsAndModels::pickerTellsWhatEachFileIs() {
    const QString models = dir_->path() + "/models";
    QVERIFY(QDir().mkpath(models));
    QVERIFY(tinyLlama().writeFile((models + "/tiny.gguf").toStdString()));
    GgufWriter mamba = tinyLlama();
    mamba.set("general.architecture", std::string("mamba"));
    QVERIFY(mamba.writeFile((models + "/mamba.gguf").toStdString()));
    ModelPicker picker(models, {});
    QTRY_VERIFY(picker.inspected());
    auto* list = picker.findChild<QListWidget*>("modelList");
    QCOMPARE(list->count(), 2);
    QCOMPARE(list->item(0)->text(), QString("mamba.gguf — Mamba · not supported"));
    QCOMPARE(list->item(1)->text(), QString("tiny.gguf — Llama · 79 K · F32 · base model"));  // no chat template
    auto* facts = picker.findChild<QLabel*>("modelFacts");
    auto* load = picker.findChild<QPushButton*>("loadButton");
    list->setCurrentRow(0);
    QVERIFY2(facts->text().contains("Hearth cannot run this model") &&
                 facts->text().contains("architecture 'mamba' is not supported (supported: llama, qwen2"),
             qPrintable(facts->text()));
    QVERIFY(facts->text().contains("Trained context: unknown"));  // mamba.context_length is not there
    QVERIFY(!load->isEnabled());
    list->setCurrentRow(1);
    for (const char* fact : {"Family: Llama (llama)", "Parameters: 79 K", "Quantization: F32",
                             "Trained context: 256 tokens", "Hearth runs this model."})
        QVERIFY2(facts->text().contains(fact), qPrintable(facts->text()));
    QVERIFY(load->isEnabled());
}

void TestSettingsAndModels::leavesOutOldTurnsThatDoNotFit() {
    GuiApp app(dir_->path());
    EngineSettings e;
    e.contextLength = 128;
    app.settings.setEngine(e);
    start(app);
    auto* notice = app.window->findChild<QLabel*>("contextNotice");
    QVERIFY(notice->isHidden());
    const QString longText = "The cat and the dog played in the park all day long. ";
    for (int i = 0; i < 6 && notice->isHidden(); ++i) {
        typeAndSend(app, QString::number(i) + " " + longText);
        QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    }
    QVERIFY(!notice->isHidden());
    QVERIFY2(notice->text().contains("left out"), qPrintable(notice->text()));
    const QList<ChatTurn>& turns = app.replies->lastRequest().turns;
    QVERIFY(turns.first().content.startsWith("0 "));  // the request had everything...
    const int nStored = static_cast<int>(app.store->activeBranch(app.conversations->current())->size());
    QCOMPARE(nStored, app.messages()->rowCount());  // ...and nothing was deleted
    QCOMPARE(app.replies->lastRequest().turns.size(), nStored - 1);
}

QTEST_MAIN(TestSettingsAndModels)
#include "test_settings_and_models.moc"
