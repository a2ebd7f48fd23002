// The window's "Local server" switch (settings → Servers) offscreen: switched on, GET /health
// answers at the address the panel shows; switched off, the port refuses connections; a port
// another program holds is said in the panel, the switch staying off. Then the
// window's replies on a remote endpoint — this same window's server, as a remote peer — with
// the header and status line saying so. HEARTH_SCREENSHOTS=DIR saves the two screenshots of
// the README (settings-local-server.png, remote-chat.png) there. Quitting stops the server too.
#include <QCheckBox>
#include <QLabel>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTabWidget>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QToolButton>

#include "tests/ui/gui_app.h"
#include "ui/chat_status.h"

using namespace hearth;
using namespace hearth::test;

namespace {

struct Answer {
    QNetworkReply::NetworkError error;
    int status;
    QByteArray body;
};

Answer get(const QString& url) {
    QNetworkAccessManager net;
    QNetworkRequest request{QUrl(url)};
    request.setTransferTimeout(10000);
    QNetworkReply* reply = net.get(request);
    QSignalSpy done(reply, &QNetworkReply::finished);
    done.wait(15000);
    Answer a{reply->error(), reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), reply->readAll()};
    delete reply;
    return a;
}

QString screenshotDir() { return qEnvironmentVariable("HEARTH_SCREENSHOTS"); }

}  // namespace

class TestLocalServer : public QObject {
    Q_OBJECT
private slots:
    void switchStartsAndStopsTheServer();
};

void TestLocalServer::switchStartsAndStopsTheServer() {
    const QString model = modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
    HEARTH_REQUIRE_FILE(model);
    QTemporaryDir dir;
    auto owned = std::make_unique<GuiApp>(dir.path());
    GuiApp& app = *owned;
    ChatSettings greedy;  // a repeatable reply for the picture
    greedy.sampling.temperature = 0;
    greedy.maxTokens = 80;
    app.settings.setChatDefaults(greedy);
    QVERIFY(!app.localServer->running());  // off by default
    QSignalSpy loaded(app.models.get(), &ModelController::loaded);
    app.window->loadModel(model);
    QVERIFY(loaded.wait(60000));

    QString address;
    QVERIFY(editSettings(app, [&](SettingsDialog* d) {
        auto* page = d->findChild<QWidget*>("serversPage");
        QVERIFY(page);
        d->findChild<QTabWidget*>()->setCurrentWidget(page);
        // A port another program holds: the panel says so and the switch stays off.
        QTcpServer taken;
        QVERIFY(taken.listen(QHostAddress::LocalHost, 0));
        page->findChild<QSpinBox*>("localServerPort")->setValue(taken.serverPort());
        page->findChild<QCheckBox*>("localServerSwitch")->click();
        QVERIFY(!page->findChild<QCheckBox*>("localServerSwitch")->isChecked());
        QVERIFY2(page->findChild<QLabel*>("localServerAddress")->text().contains("cannot listen"),
                 qPrintable(page->findChild<QLabel*>("localServerAddress")->text()));
        page->findChild<QSpinBox*>("localServerPort")->setValue(0);  // any free port
        page->findChild<QCheckBox*>("localServerSwitch")->click();
        const QString shown = page->findChild<QLabel*>("localServerAddress")->text();
        const auto m = QRegularExpression("(http://127\\.0\\.0\\.1:\\d+)").match(shown);
        QVERIFY2(m.hasMatch(), qPrintable(shown));
        address = m.captured(1);
        QTest::qWait(200);  // the panel's layout takes the address's new lines
        if (!screenshotDir().isEmpty()) d->grab().save(screenshotDir() + "/settings-local-server.png");
    }));
    QVERIFY(app.localServer->running());
    QCOMPARE(app.localServer->address(), address);
    Answer health = get(address + "/health");
    QCOMPARE(health.status, 200);
    QVERIFY2(health.body.contains("ok"), health.body.constData());

    // The window on a remote endpoint: this window's own server.
    app.remote->apply({.enabled = true, .baseUrl = address, .model = "SmolLM2", .timeoutSeconds = 60}, std::nullopt);
    QVERIFY(app.window->findChild<QToolButton*>("modelHeader")->text().contains("remote"));
    typeAndSend(app, "Give me three tips for staying focused.");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 120000);
    const MessageRow* reply = app.messages()->row(app.messages()->rowCount() - 1);
    QVERIFY(reply && reply->role == ChatRole::Assistant && !reply->text.isEmpty());
    bool saysRemote = false;
    for (QLabel* l : app.window->findChild<ChatStatus*>()->findChildren<QLabel*>())
        saysRemote = saysRemote || l->text().contains("no local KV");
    QVERIFY2(saysRemote, "the status line says a remote reply has no local KV");
    if (!screenshotDir().isEmpty()) app.window->grab().save(screenshotDir() + "/remote-chat.png");
    app.remote->apply({.enabled = false, .baseUrl = address, .model = "SmolLM2", .timeoutSeconds = 60}, std::nullopt);

    QVERIFY(editSettings(app, [&](SettingsDialog* d) {
        d->findChild<QCheckBox*>("localServerSwitch")->click();
        QCOMPARE(d->findChild<QLabel*>("localServerAddress")->text(), QStringLiteral("Off"));
    }));
    QVERIFY(!app.localServer->running());
    QCOMPARE(get(address + "/health").error, QNetworkReply::ConnectionRefusedError);

    // On again, then quit: the window's teardown stops it.
    QVERIFY(app.localServer->start(0));
    const QString again = app.localServer->address();
    QCOMPARE(get(again + "/health").status, 200);
    owned.reset();
    QCOMPARE(get(again + "/health").error, QNetworkReply::ConnectionRefusedError);
}

QTEST_MAIN(TestLocalServer)
#include "test_local_server.moc"
