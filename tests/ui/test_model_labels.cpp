// Issue 27: which model wrote a reply, and whether a model is tuned for chat. Replies from
// different models in one chat carry the model's readable name (recorded with the reply in the
// store, schema v4), shown on the row once a second model has answered; a base model (Gemma 3
// 270M, no chat template) is flagged in the picker, the model header and the welcome page.
#include <QLabel>
#include <QListWidget>
#include <QTemporaryDir>
#include <QToolButton>

#include "tests/ui/gui_app.h"
#include "ui/model_picker.h"
#include "ui/start_pages.h"

using namespace hearth;
using namespace hearth::test;

class TestModelLabels : public QObject {
    Q_OBJECT
private slots:
    void init() { dir_ = std::make_unique<QTemporaryDir>(); }
    void repliesFromTwoModelsAreLabelled();
    void aBaseModelIsFlagged();

private:
    std::unique_ptr<QTemporaryDir> dir_;
};

static QStringList markers(GuiApp& app, int row) {
    QStringList out;
    for (const MessageDelegate::Hit& h : app.window->messageView()->hitsAt(row))
        if (h.action == MessageDelegate::Action::Marker) out << h.label;
    return out;
}

static void reply(GuiApp& app, const QString& text) {
    QTRY_VERIFY(app.sendButton()->isEnabled());
    typeAndSend(app, text);
    QTRY_VERIFY_WITH_TIMEOUT(app.replies->generating(), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
}

void TestModelLabels::repliesFromTwoModelsAreLabelled() {
    // Two small models of different names: the shared stories260K (else a tiny Llama) and a tiny
    // Llama written here.
    const QString first = smallModel(dir_->path());
    const QString second = dir_->path() + "/second-tiny-model.gguf";
    QVERIFY(tinyLlama().writeFile(second.toStdString()));
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    ChatSettings s;
    s.maxTokens = 3;
    app.settings.setChatDefaults(s);
    app.window->loadModel(first);
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model() && app.models->model()->file.path == first, 20000);
    const QString firstName = app.models->model()->file.name;
    reply(app, "one");
    QCOMPARE(app.messages()->rowCount(), 2);
    QVERIFY2(!markers(app, 1).contains(firstName), qPrintable(markers(app, 1).join(',')));  // one model: no label
    // Stored with the reply.
    auto branch = app.store->activeBranch(app.conversations->current());
    QVERIFY(branch && branch->size() == 2);
    QCOMPARE(QString::fromStdString(branch->back().model), firstName);

    app.window->loadModel(second);
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model() && app.models->model()->file.path == second, 20000);
    const QString secondName = app.models->model()->file.name;
    QVERIFY(secondName != firstName);
    reply(app, "two");
    QCOMPARE(app.messages()->rowCount(), 4);
    QVERIFY2(markers(app, 1).contains(firstName), qPrintable(markers(app, 1).join(',')));
    QVERIFY2(markers(app, 3).contains(secondName), qPrintable(markers(app, 3).join(',')));
    QVERIFY(!markers(app, 0).contains(firstName) && !markers(app, 2).contains(secondName));  // user rows: none
    // Reopened after a restart, from the store.
    const qint64 chat = app.conversations->current();
    app.conversations->newConversation();
    app.conversations->openConversation(chat);
    QTRY_COMPARE(app.messages()->rowCount(), 4);
    QVERIFY(markers(app, 1).contains(firstName) && markers(app, 3).contains(secondName));
}

void TestModelLabels::aBaseModelIsFlagged() {
    const QString gemma = modelFile("gemma-3-270m-q4_k_m.gguf");
    HEARTH_REQUIRE_FILE(gemma);
    // The picker over a folder holding it: its line and its facts.
    const QString folder = dir_->path() + "/models";
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(QFile::link(gemma, folder + "/gemma-3-270m-q4_k_m.gguf"));
    {
        ModelPicker picker(folder, folder + "/gemma-3-270m-q4_k_m.gguf");
        QTRY_VERIFY_WITH_TIMEOUT(picker.inspected(), 20000);
        const QString line = picker.findChild<QListWidget*>("modelList")->item(0)->text();
        QVERIFY2(line.contains("base model") && line.contains("268 M"), qPrintable(line));  // and its parameters
        QVERIFY2(picker.findChild<QLabel*>("modelFacts")->text().contains("not tuned for chat"),
                 qPrintable(picker.findChild<QLabel*>("modelFacts")->text()));
    }
    // Loaded: the model header and the welcome page say so.
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.window->loadModel(gemma);
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 60000);
    QVERIFY(!app.models->model()->file.chatTuned);
    app.conversations->newConversation();
    QTRY_VERIFY(app.window->welcomePage()->isVisible());
    const QString welcome = app.window->welcomePage()->findChild<QLabel*>("welcomeModel")->text();
    QVERIFY2(welcome.contains("not tuned for chat"), qPrintable(welcome));
    const QString header = app.window->findChild<QToolButton*>("modelHeader")->text();
    QVERIFY2(header.contains("base model"), qPrintable(header));
}

QTEST_MAIN(TestModelLabels)
#include "test_model_labels.moc"
