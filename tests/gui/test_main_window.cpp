// The minimal chat window, offscreen: it loads a model on the engine thread, sends a message,
// streams the reply into the transcript, and returns to Send when the reply ends.
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextBrowser>
#include <QtTest>

#include "app/engine_host.h"
#include "tests/support/test_env.h"
#include "ui/main_window.h"

using namespace hearth;

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void chatsWithATinyModel();
    void reportsAModelThatCannotLoad();
};

void TestMainWindow::chatsWithATinyModel() {
    const QString model = test::testDataFile("stories260K.gguf");
    HEARTH_REQUIRE_FILE(model);
    EngineHost host;
    MainWindow window(host);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* send = window.findChild<QPushButton*>("sendButton");
    auto* composer = window.findChild<QPlainTextEdit*>("composer");
    auto* transcript = window.findChild<QTextBrowser*>("transcript");
    auto* status = window.findChild<QLabel*>("status");
    QVERIFY(send && composer && transcript && status);
    QVERIFY(!send->isEnabled());
    host.loadModel(model);
    QTRY_VERIFY_WITH_TIMEOUT(send->isEnabled(), 20000);
    composer->setPlainText("Once upon a time");
    QTest::keyClick(composer, Qt::Key_Return);
    QVERIFY(composer->toPlainText().isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(send->text(), QString("Send"), 60000);
    const QString text = transcript->toPlainText();
    QVERIFY2(text.contains("Once upon a time"), qPrintable(text));
    QVERIFY2(text.size() > QString("You\nOnce upon a time\nHearth\n").size() + 10, qPrintable(text));
    QVERIFY2(status->text().contains("tok/s"), qPrintable(status->text()));
}

void TestMainWindow::reportsAModelThatCannotLoad() {
    EngineHost host;
    MainWindow window(host);
    window.show();
    auto* status = window.findChild<QLabel*>("status");
    host.loadModel(QDir::temp().filePath("hearth-no-such-model.gguf"));
    QTRY_VERIFY_WITH_TIMEOUT(status->text().contains("Cannot load"), 10000);
    QVERIFY(!window.findChild<QPushButton*>("sendButton")->isEnabled());
}

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
