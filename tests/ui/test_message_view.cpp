// The message view while a reply streams into a long conversation: the streamed document,
// updated in place batch by batch, renders what parsing the whole text renders; the streamed
// row stays placed (a valid rectangle of the right height) after every batch, and the view
// follows the end; a thinking model's reasoning stays folded above the answer while it streams
// and after. No model: rows are appended to the message model as the controller does.
#include <QClipboard>
#include <QRandomGenerator>
#include <QScrollBar>
#include <QtTest>

#include "app/chat/message_list_model.h"
#include "ui/message_view.h"

using namespace hearth;

namespace {

const char* const kReply =
    "## Plan\n\nFirst a paragraph with *emphasis* and `code`.\n\n- one\n- two\n  continued\n\n"
    "```python\ndef f(x):\n\n    return x  # a blank line inside the fence\n```\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n1. first\n2. second\n\nLast paragraph,\nover two lines.";

// Lines with text, in order: the streamed document may keep a paragraph break as an empty block.
QStringList textLines(QString text) {
    text.remove(QChar(0x258D));
    QStringList out;
    for (const QString& line : text.split(QLatin1Char('\n')))
        if (!line.trimmed().isEmpty()) out << line.trimmed();
    return out;
}

struct Fixture {
    MessageListModel model;
    MessageView view;
    Fixture(int nRows) {
        std::vector<MessageRow> rows;
        for (int i = 0; i < nRows; ++i)
            rows.push_back({i + 1, i % 2 ? ChatRole::Assistant : ChatRole::User,
                            QStringLiteral("message %1\n\nwith a second paragraph").arg(i)});
        model.setRows(std::move(rows));
        view.setModel(&model);
        view.resize(700, 500);
        view.show();
    }
    QStyleOptionViewItem option(int row) {
        QStyleOptionViewItem o;
        o.rect = view.visualRect(model.index(row, 0));
        o.fontMetrics = view.fontMetrics();
        return o;
    }
};

}  // namespace

class TestMessageView : public QObject {
    Q_OBJECT
private slots:
    void streamedDocumentRendersWhatTheWholeTextDoes();
    void streamedRowStaysPlacedAndFollowed();
    void reasoningFoldsAboveTheAnswer();
};

// Random splits put batch boundaries inside fences, list items, table rows and blank lines.
void TestMessageView::streamedDocumentRendersWhatTheWholeTextDoes() {
    const QString reply = QString::fromUtf8(kReply);
    for (quint32 seed = 1; seed <= 20; ++seed) {
        Fixture f(4);
        QVERIFY(QTest::qWaitForWindowExposed(&f.view));
        f.model.append(MessageRow{100, ChatRole::Assistant, {}, true});
        const int row = f.model.rowCount() - 1;
        QRandomGenerator rng(seed);
        for (qsizetype at = 0; at < reply.size();) {
            const qsizetype n = std::min<qsizetype>(reply.size() - at, 1 + rng.bounded(12));
            f.model.appendText(100, reply.mid(at, n));
            at += n;
            if (rng.bounded(2)) QCoreApplication::processEvents();
            (void)f.view.messageDelegate()->renderedText(f.option(row), f.model.index(row, 0));  // renders this version
        }
        QCoreApplication::processEvents();
        const QString streamed = f.view.messageDelegate()->renderedText(f.option(row), f.model.index(row, 0));
        f.model.setStreaming(100, false);
        const QString whole = f.view.messageDelegate()->renderedText(f.option(row), f.model.index(row, 0));
        QVERIFY2(streamed.contains(QChar(0x258D)), "the streamed document shows the cursor");
        QCOMPARE(textLines(streamed), textLines(whole));
    }
}

void TestMessageView::streamedRowStaysPlacedAndFollowed() {
    Fixture f(1000);
    QVERIFY(QTest::qWaitForWindowExposed(&f.view));
    QTRY_VERIFY(f.view.visualRect(f.model.index(999, 0)).isValid());  // the batched first layout is done
    f.model.append(MessageRow{5000, ChatRole::Assistant, {}, true});
    const int row = f.model.rowCount() - 1;
    QTRY_VERIFY(f.view.visualRect(f.model.index(row, 0)).isValid());
    for (int batch = 0; batch < 120; ++batch) {
        f.model.appendText(5000,
                           QStringLiteral("word%1 %2")
                               .arg(batch)
                               .arg(batch % 10 == 9      ? "\n\n"
                                        : batch % 3 == 2 ? "\n"
                                                         : ""));
        QCoreApplication::processEvents();
        const QRect r = f.view.visualRect(f.model.index(row, 0));
        QVERIFY2(r.isValid(), qPrintable(QStringLiteral("the streamed row is unplaced after batch %1").arg(batch)));
        QStyleOptionViewItem o = f.option(row);
        QCOMPARE(r.height(), f.view.messageDelegate()->sizeHint(o, f.model.index(row, 0)).height());
        QVERIFY(f.view.followsEnd());
        QCOMPARE(f.view.verticalScrollBar()->value(), f.view.verticalScrollBar()->maximum());
    }
}

namespace {

std::optional<MessageDelegate::Hit> hitOf(MessageView& view, int row, MessageDelegate::Action action) {
    for (const MessageDelegate::Hit& h : view.hitsAt(row))
        if (h.action == action) return h;
    return std::nullopt;
}

}  // namespace

// Batches split the markers, as tokens do; the answer never shows reasoning or a marker.
void TestMessageView::reasoningFoldsAboveTheAnswer() {
    Fixture f(2);
    QVERIFY(QTest::qWaitForWindowExposed(&f.view));
    f.model.append(MessageRow{100, ChatRole::Assistant, {}, true});
    const int row = f.model.rowCount() - 1;
    const QModelIndex index = f.model.index(row, 0);
    MessageDelegate* d = f.view.messageDelegate();
    using Action = MessageDelegate::Action;
    const QStringList batches = {"<thi", "nk>\nWeighing", " it.\n</th", "ink>\n\nThe ", "answer."};
    for (const QString& batch : batches) {
        f.model.appendText(100, batch);
        QCoreApplication::processEvents();
        const QString answer = d->renderedText(f.option(row), index);
        QVERIFY2(!answer.contains("Weighing") && !answer.contains("<th") && !answer.contains("ink>"),
                 qPrintable(answer));
        const auto header = hitOf(f.view, row, Action::ToggleReasoning);
        const bool thinking = index.data(MessageListModel::ReasoningOpenRole).toBool();
        if (batch.startsWith("<thi")) QVERIFY(!header);  // half a marker: nothing to show yet
        else
            QVERIFY2(header && header->label == (thinking ? "▸ Thinking…" : "▸ Reasoning"),
                     qPrintable(header ? header->label : ""));
    }
    QVERIFY(!index.data(MessageListModel::ReasoningOpenRole).toBool());
    QCOMPARE(index.data(MessageListModel::ReasoningRole).toString(), QString("Weighing it."));
    QVERIFY(d->renderedText(f.option(row), index).contains("The answer."));
    f.model.setStreaming(100, false);
    QCOMPARE(index.data(Qt::DisplayRole).toString(), batches.join(QString()));  // the row's text keeps it all
    QCOMPARE(d->renderedText(f.option(row), index), QString("The answer."));
    QVERIFY(d->renderedReasoning(f.option(row), index).isEmpty());  // folded
    // A click on the header shows the reasoning above the answer; the row grows; another folds it.
    const int folded = f.view.visualRect(index).height();
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {},
                      hitOf(f.view, row, Action::ToggleReasoning)->rect.center());
    QVERIFY(index.data(MessageListModel::ReasoningExpandedRole).toBool());
    QCOMPARE(d->renderedReasoning(f.option(row), index), QString("Weighing it."));
    QTRY_VERIFY(f.view.visualRect(index).height() > folded);
    QCOMPARE(hitOf(f.view, row, Action::ToggleReasoning)->label, QString("▾ Reasoning"));
    QVERIFY(hitOf(f.view, row, Action::CopyMessage)->rect.top() >
            hitOf(f.view, row, Action::ToggleReasoning)->rect.bottom());
    // Copy copies the answer only.
    QApplication::clipboard()->clear();
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {}, hitOf(f.view, row, Action::CopyMessage)->rect.center());
    QCOMPARE(QApplication::clipboard()->text(), QString("The answer."));
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {},
                      hitOf(f.view, row, Action::ToggleReasoning)->rect.center());
    QVERIFY(!index.data(MessageListModel::ReasoningExpandedRole).toBool());
    QTRY_COMPARE(f.view.visualRect(index).height(), folded);
}

QTEST_MAIN(TestMessageView)
#include "test_message_view.moc"
