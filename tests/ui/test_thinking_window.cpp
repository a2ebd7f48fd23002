// A thinking model in the window, offscreen, through the real controller and engine thread: the
// streamed reply is shown as a folded reasoning header above the answer (click to expand), the
// store keeps the whole reply, Copy copies the answer; the panel's Thinking switch appears only
// for a model whose format has one, and its choice is what the next request carries.
#include <QCheckBox>
#include <QClipboard>
#include <QTemporaryDir>

#include "tests/app/chat/thinking_model.h"
#include "tests/ui/gui_app.h"

using namespace hearth;
using namespace hearth::test;
using Action = MessageDelegate::Action;

class TestThinkingWindow : public QObject {
    Q_OBJECT
private slots:
    void init() { dir_ = std::make_unique<QTemporaryDir>(); }
    void showsReasoningApartFromTheAnswer();
    void thinkingSwitchFollowsTheModel();

private:
    void load(GuiApp& app, const QString& path);
    std::unique_ptr<QTemporaryDir> dir_;
};

void TestThinkingWindow::load(GuiApp& app, const QString& path) {
    ChatSettings s;
    s.maxTokens = 32;
    s.sampling.temperature = 0;
    app.settings.setChatDefaults(s);
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.window->loadModel(path);
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model() && app.models->model()->file.path == path, 20000);
    QTRY_VERIFY(app.sendButton()->isEnabled());
    app.window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(app.window.get()));
}

QString thinkingModelPath(const QString& dir) {
    const QString path = dir + "/thinking.gguf";
    return thinkingModel().writeFile(path.toStdString()) ? path : QString();
}

std::optional<MessageDelegate::Hit> hitOf(MainWindow& w, int row, Action action) {
    for (const MessageDelegate::Hit& h : w.messageView()->hitsAt(row))
        if (h.action == action) return h;
    return std::nullopt;
}

void TestThinkingWindow::showsReasoningApartFromTheAnswer() {
    GuiApp app(dir_->path());
    load(app, thinkingModelPath(dir_->path()));
    bool answerShowedReasoning = false;  // checked at every batch the view was told of
    connect(app.messages(), &QAbstractItemModel::dataChanged, this, [&](const QModelIndex& i) {
        const QString answer = i.data(MessageListModel::AnswerRole).toString();
        answerShowedReasoning = answerShowedReasoning || answer.contains("Weighing") || answer.contains("think>");
    });
    typeAndSend(app, "2+2?");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QVERIFY(!answerShowedReasoning);
    QCOMPARE(app.messages()->rowCount(), 2);
    const QModelIndex reply = app.messages()->index(1, 0);
    QCOMPARE(reply.data(MessageListModel::ReasoningRole).toString(), QString::fromUtf8(kThinkingReasoning));
    QCOMPARE(reply.data(MessageListModel::AnswerRole).toString(), QString::fromUtf8(kThinkingAnswer));
    // The store keeps the whole reply, reasoning included.
    const auto stored = app.store->activeBranch(app.conversations->current()).value();
    QCOMPARE(QString::fromStdString(stored.at(1).text), QString::fromUtf8(kThinkingReply));
    QCOMPARE(app.rowText(1), QString::fromUtf8(kThinkingReply));
    // Shown: the answer under a folded header; a click unfolds the reasoning.
    MessageView* view = app.window->messageView();
    QStyleOptionViewItem option;
    option.rect = view->visualRect(reply);
    option.fontMetrics = view->fontMetrics();
    QCOMPARE(view->messageDelegate()->renderedText(option, reply), QString::fromUtf8(kThinkingAnswer));
    QCOMPARE(hitOf(*app.window, 1, Action::ToggleReasoning)->label, QString("▸ Reasoning"));
    QVERIFY(clickChip(*app.window, 1, Action::ToggleReasoning));
    QVERIFY(reply.data(MessageListModel::ReasoningExpandedRole).toBool());
    option.rect = view->visualRect(reply);
    QCOMPARE(view->messageDelegate()->renderedReasoning(option, reply), QString::fromUtf8(kThinkingReasoning));
    QVERIFY(clickChip(*app.window, 1, Action::CopyMessage));
    QCOMPARE(QApplication::clipboard()->text(), QString::fromUtf8(kThinkingAnswer));
}

void TestThinkingWindow::thinkingSwitchFollowsTheModel() {
    GuiApp app(dir_->path());
    load(app, smallModel(dir_->path()));  // no reasoning span: no switch
    QVERIFY(editSettings(
        app, [](SettingsDialog* d) { QVERIFY(!d->findChild<QCheckBox*>("thinkingCheck")->isVisibleTo(d)); }));
    load(app, thinkingModelPath(dir_->path()));  // Qwen 3's template: enable_thinking
    typeAndSend(app, "2+2?");
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QVERIFY(app.replies->lastRequest().settings.thinking);
    QVERIFY(editSettings(app, [](SettingsDialog* d) {
        auto* check = d->findChild<QCheckBox*>("thinkingCheck");
        QVERIFY(check->isVisibleTo(d) && check->isEnabled() && check->isChecked());
        check->click();
    }));
    QVERIFY(!app.chatSettings->conversationSettings().thinking);
    QVERIFY(app.chatSettings->defaultSettings().thinking);  // this conversation's override
    app.replies->regenerate();
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
    QVERIFY(!app.replies->lastRequest().settings.thinking);
}

QTEST_MAIN(TestThinkingWindow)
#include "test_thinking_window.moc"
