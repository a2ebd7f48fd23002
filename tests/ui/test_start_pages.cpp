// Issue 27's pages in the chat area, offscreen: the first start without a model (what a model is,
// the catalog's real folders, the "Model…" picker; no file error, no developer script) and the
// welcome page of a new, empty chat (the model in use, three example prompts that fill the
// composer, what Hearth remembers), with their words in Simplified Chinese.
#include <QLabel>
#include <QPushButton>
#include <QStackedWidget>
#include <QTemporaryDir>
#include <QTranslator>

#include "app/common/paths.h"
#include "tests/ui/gui_app.h"
#include "ui/chat_status.h"
#include "ui/model_picker.h"
#include "ui/start_pages.h"

using namespace hearth;
using namespace hearth::test;

class TestStartPages : public QObject {
    Q_OBJECT
private slots:
    void init() { dir_ = std::make_unique<QTemporaryDir>(); }
    void firstStartWithoutAModel();
    void welcomePageInANewChat();
    void aRemoteServerIsAModelInUse();
    void pagesAreInChinese();

private:
    std::unique_ptr<QTemporaryDir> dir_;
};

static QString allText(QWidget* w) {
    QStringList parts;
    for (QLabel* l : w->findChildren<QLabel*>()) parts << l->text();
    for (QAbstractButton* b : w->findChildren<QAbstractButton*>()) parts << b->text();
    return parts.join('\n');
}

static QString messagesText(GuiApp& app) {
    QStringList rows;
    for (int i = 0; i < app.messages()->rowCount(); ++i) rows << app.rowText(i);
    return rows.join('\n');
}

// gui_main.cpp loads the default model only when it is there; a window asked for a file that is
// not there while it has no model (the last model moved away) ends on the same page.
void TestStartPages::firstStartWithoutAModel() {
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    FirstStartPage* page = app.window->firstStartPage();
    QVERIFY(page->isVisible());  // nothing loaded, nothing loading
    app.window->loadModel(dir_->path() + "/SmolLM2-135M-Instruct.Q4_1.gguf");
    QTRY_VERIFY_WITH_TIMEOUT(page->isVisible(), 10000);
    QTest::qWait(200);  // the failure has arrived: nothing else follows it
    QVERIFY(page->isVisible());
    QCOMPARE(app.messages()->rowCount(), 0);  // no error notice about a file nobody chose
    const QString shown = allText(page) + messagesText(app) + allText(app.window->findChild<ChatStatus*>());
    QVERIFY2(!shown.contains("cannot read or write", Qt::CaseInsensitive), qPrintable(shown));
    QVERIFY2(!shown.contains("packaging/scripts"), qPrintable(shown));
    QVERIFY2(!shown.contains("context 0 / 0"), qPrintable(shown));  // no figure without a model
    // The folders are the catalog's own, Hearth's first.
    const QString folders = page->findChild<QLabel*>("modelFolders")->text();
    QVERIFY2(folders.startsWith("Hearth: " + hearth::modelsDir()), qPrintable(folders));
    for (const char* source : {"LM Studio", "Ollama", "GPT4All", "Jan", "Hugging Face", "llama.cpp"})
        QVERIFY2(folders.contains(QString(source) + ": "), qPrintable(folders));
    QVERIFY(allText(page).contains("GGUF"));
    // Its button opens the model picker.
    bool picker = false;
    connect(app.window.get(), &MainWindow::settingsDialogOpened, this, [&](QWidget* w) {
        picker = qobject_cast<ModelPicker*>(w) != nullptr;
        QTimer::singleShot(0, w, [w] { qobject_cast<QDialog*>(w)->reject(); });
    });
    page->chooseButton()->click();
    QVERIFY(picker);
}

void TestStartPages::welcomePageInANewChat() {
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.window->loadModel(smallModel(dir_->path()));
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 20000);
    app.conversations->newConversation();
    WelcomePage* page = app.window->welcomePage();
    QTRY_VERIFY(page->isVisible());
    QVERIFY(!app.window->firstStartPage()->isVisible());
    const QString model = page->findChild<QLabel*>("welcomeModel")->text();
    QVERIFY2(model.contains(app.models->model()->file.name), qPrintable(model));
    QCOMPARE(page->promptButtons().size(), 3);
    QPushButton* example = page->promptButtons().at(1);
    QTest::mouseClick(example, Qt::LeftButton);
    QCOMPARE(app.input()->toPlainText(), example->text());
    QVERIFY(app.input()->hasFocus() || !app.window->isActiveWindow());
    QVERIFY(page->findChild<QLabel*>("welcomeMemory")->text().contains("this computer"));
    // A message in the chat: the messages take the place of the page.
    ChatSettings s;
    s.maxTokens = 4;
    app.settings.setChatDefaults(s);
    QTRY_VERIFY(app.sendButton()->isEnabled());
    QTest::keyClick(app.input(), Qt::Key_Return);
    QTRY_VERIFY(app.window->messageView()->isVisible());
    QVERIFY(!page->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 20000);
}

// Replies on a remote server need no local model: the welcome page names the server's model,
// and the first-start page comes back when the switch is off again.
void TestStartPages::aRemoteServerIsAModelInUse() {
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    QVERIFY(app.window->firstStartPage()->isVisible());
    const RemoteSettings on{.enabled = true, .baseUrl = "http://127.0.0.1:9", .model = "qwen3", .timeoutSeconds = 5};
    app.remote->apply(on, std::nullopt);
    QTRY_VERIFY(app.window->welcomePage()->isVisible());
    const QString model = app.window->welcomePage()->findChild<QLabel*>("welcomeModel")->text();
    QVERIFY2(model.contains("qwen3 (remote)"), qPrintable(model));
    RemoteSettings off = on;
    off.enabled = false;
    app.remote->apply(off, std::nullopt);
    QTRY_VERIFY(app.window->firstStartPage()->isVisible());
}

// Every word of both pages has its Chinese; names (sources, GGUF, paths) stay as they are.
void TestStartPages::pagesAreInChinese() {
    QTranslator zh;
    QVERIFY(zh.load(":/i18n/hearth_zh_CN.qm"));
    QCoreApplication::installTranslator(&zh);
    FirstStartPage first;
    WelcomePage welcome;
    welcome.setModelName("SmolLM2 135M");
    QCoreApplication::removeTranslator(&zh);
    FirstStartPage firstEn;
    WelcomePage welcomeEn;
    welcomeEn.setModelName("SmolLM2 135M");
    const auto texts = [](QWidget* w) {
        QStringList out;
        for (QLabel* l : w->findChildren<QLabel*>())
            if (!l->text().isEmpty()) out << l->text();
        for (QAbstractButton* b : w->findChildren<QAbstractButton*>()) out << b->text();
        return out;
    };
    const QStringList zhTexts = texts(&first) + texts(&welcome), enTexts = texts(&firstEn) + texts(&welcomeEn);
    QCOMPARE(zhTexts.size(), enTexts.size());
    for (int i = 0; i < zhTexts.size(); ++i) {
        QVERIFY2(zhTexts[i] != enTexts[i], qPrintable("untranslated: " + enTexts[i]));
        QVERIFY2(zhTexts[i].contains(QRegularExpression("[\\x{4e00}-\\x{9fff}]")), qPrintable(zhTexts[i]));
    }
}

QTEST_MAIN(TestStartPages)
#include "test_start_pages.moc"
