// Documents through the window, offscreen, on SmolLM2: the paperclip attaches a 200-page text,
// a drop attaches a note and refuses a binary file with a notice, the question about page 150
// goes out with the passage that answers it in its user turn (the row shows the user's words),
// the reply cites its sources and a click on one shows the passage; regenerating submits the
// same prompt, and a restart keeps the attachments.
#include <QDialog>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMimeData>
#include <QTextBrowser>
#include <QToolButton>

#include "app/chat/attachment_controller.h"
#include "tests/support/generated_documents.h"
#include "tests/ui/gui_app.h"
#include "ui/documents_ui.h"

using namespace hearth;
using namespace hearth::test;

class TestDocumentsWindow : public QObject {
    Q_OBJECT
    std::unique_ptr<QTemporaryDir> dir_;
    QString writeFile(const QString& name, const QByteArray& bytes) {
        const QString p = dir_->path() + "/" + name;
        QFile f(p);
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) qWarning("cannot write %s", qPrintable(p));
        return p;
    }
    static void drop(QWidget* target, const QStringList& files) {
        QMimeData mime;
        QList<QUrl> urls;
        for (const QString& f : files) urls.append(QUrl::fromLocalFile(f));
        mime.setUrls(urls);
        const QPoint at = target->rect().center();
        QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, {});
        QCoreApplication::sendEvent(target, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent dropEvent(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, {});
        QCoreApplication::sendEvent(target, &dropEvent);
        QVERIFY(dropEvent.isAccepted());
    }

private slots:
    void init() { dir_ = std::make_unique<QTemporaryDir>(); }

    void attachAndAskThroughTheWindow() {
        const QString smol = modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
        if (!QFileInfo::exists(smol)) QSKIP("SmolLM2-135M-Instruct.Q4_1.gguf is not in HEARTH_MODELS_DIR");
        const QString handbook = writeFile("handbook.txt", QByteArray::fromStdString(longDocument(200, 150)));
        const QString notes = writeFile("notes.md", "# Notes\n\nBring the red umbrella.\n");
        QByteArray binary(2048, '\0');
        for (int i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 31);
        const QString image = writeFile("photo.jpg", binary);
        const QString question = "When does the night ferry to Vellmora leave?";
        qint64 conversation = 0;
        QString firstPrompt;
        {
            GuiApp app(dir_->path());
            ChatSettings chatDefaults;
            chatDefaults.maxTokens = 48;  // the replies' words are not what is tested; CI time is
            app.settings.setChatDefaults(chatDefaults);
            app.window->loadModel(smol);
            QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 30000);
            DocumentsUi* docs = app.window->documents();
            docs->setFileChooser([&] { return QStringList{handbook}; });
            QSignalSpy finished(&docs->attachments(), &AttachmentController::attachFinished);
            QTest::mouseClick(app.window->findChild<QToolButton*>("attachButton"), Qt::LeftButton);
            QTRY_COMPARE(finished.count(), 1);  // read on the thread pool, stored here
            QCOMPARE(finished.at(0).at(0).toInt(), 1);
            QCOMPARE(docs->attachments().attachments().size(), size_t{1});
            auto* label = app.window->findChild<QLabel*>("attachmentsLabel");
            QVERIFY(label->isVisible());
            QVERIFY2(label->text().contains("handbook.txt") && label->text().contains("1,500"),
                     qPrintable(label->text()));
            drop(app.window->messageView()->viewport(), {notes, image});
            QTRY_COMPARE(finished.count(), 2);
            QCOMPARE(finished.at(1).at(0).toInt(), 1);  // attached: the note
            QCOMPARE(finished.at(1).at(1).toInt(), 1);  // refused: the photo
            QCOMPARE(docs->attachments().attachments().size(), size_t{2});
            QVERIFY(app.messages()->rowCount() >= 1);
            const MessageRow* notice = app.messages()->row(app.messages()->rowCount() - 1);
            QVERIFY(notice->isNotice());
            QVERIFY2(notice->text.contains("photo.jpg") && notice->text.contains("not a text file"),
                     qPrintable(notice->text));

            typeAndSend(app, question);
            QTRY_VERIFY_WITH_TIMEOUT(app.replies->generating(), 5000);
            const QString prompt = app.replies->lastRequest().turns.last().content;
            QVERIFY2(prompt.contains(kFact), qPrintable(prompt.left(400)));
            QVERIFY(prompt.contains("<document name=\"notes.md\">"));  // the small one, whole
            QVERIFY(prompt.endsWith(question));
            QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 180000);
            QCOMPARE(app.rowText(0), question);  // the user's words, not the documents
            const int reply = 1;
            QVERIFY(!app.messages()->index(reply).data(MessageListModel::SourcesRole).toString().isEmpty());
            QVERIFY(clickChip(*app.window, reply, MessageDelegate::Action::Source));
            QTRY_VERIFY(docs->sourcesDialog() && docs->sourcesDialog()->isVisible());
            auto* text = docs->sourcesDialog()->findChild<QTextBrowser*>("sourceText");
            auto* list = docs->sourcesDialog()->findChild<QListWidget*>("sourcesList");
            QVERIFY(list->count() >= 2);
            bool shown = false;  // the passage with the fact is one of those cited
            for (int i = 0; i < list->count() && !shown; ++i) {
                list->setCurrentRow(i);
                shown = text->toPlainText().contains(kFact);
            }
            QVERIFY(shown);
            docs->sourcesDialog()->close();
            firstPrompt = prompt;
            // Regenerate renders the same prompt from what the turn recorded.
            QVERIFY(clickChip(*app.window, reply, MessageDelegate::Action::Regenerate));
            QTRY_VERIFY_WITH_TIMEOUT(app.replies->generating(), 5000);
            QCOMPARE(app.replies->lastRequest().turns.last().content, firstPrompt);
            app.replies->stop();
            QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 30000);
            conversation = app.conversations->current();
        }
        GuiApp again(dir_->path());  // a restart
        again.conversations->openConversation(conversation);
        const auto& kept = again.window->documents()->attachments().attachments();
        QCOMPARE(kept.size(), size_t{2});
        QCOMPARE(QString::fromStdString(kept[0].name), QString("handbook.txt"));
        QVERIFY(again.window->findChild<QLabel*>("attachmentsLabel")->text().contains("notes.md"));
        // The next turn: the first one, documents and all, is the same prompt prefix, so its
        // saved KV is restored rather than computed again.
        again.window->loadModel(smol);
        QTRY_VERIFY_WITH_TIMEOUT(again.models->model().has_value(), 30000);
        ReplyStats stats;
        bool finished = false;
        connect(again.replies.get(), &ReplyController::replyFinished, this, [&](const ReplyStats& s) {
            stats = s;
            finished = true;
        });
        typeAndSend(again, "Which pier does the ferry leave from?");
        QTRY_VERIFY_WITH_TIMEOUT(again.replies->generating(), 5000);
        const QList<ChatTurn> turns = again.replies->lastRequest().turns;
        QCOMPARE(turns.first().content, firstPrompt);  // the earlier turn exactly as it was sent
        QVERIFY(turns.last().content.endsWith("Which pier does the ferry leave from?"));
        QVERIFY(turns.last().content.contains(kFact));
        QVERIFY(!turns.last().content.contains("<document name=\"notes.md\">"));  // already in the first turn
        QTRY_VERIFY_WITH_TIMEOUT(finished, 180000);
        qInfo("second turn after a restart: %d of %d prompt tokens restored from the store (%s)",
              stats.kvRestoredTokens, stats.promptTokens, qPrintable(stats.kvNote));
        QVERIFY2(stats.kvRestoredTokens > 1000, qPrintable(stats.kvNote));
        // Removing the note: later turns no longer see it; the first turn keeps what it carried.
        QMenu* menu = again.window->composer()->attachmentsMenu();
        emit menu->aboutToShow();
        QAction* removeNote = nullptr;
        for (QAction* a : menu->actions())
            if (a->text() == "Remove notes.md") removeNote = a;
        QVERIFY(removeNote);
        removeNote->trigger();
        QCOMPARE(again.window->documents()->attachments().attachments().size(), size_t{1});
        QVERIFY(!again.window->findChild<QLabel*>("attachmentsLabel")->text().contains("notes.md"));
        auto first = again.store->activeBranch(conversation);
        QVERIFY(first && QString::fromStdString(first->front().documentsJson).contains("notes.md"));
    }
};

QTEST_MAIN(TestDocumentsWindow)
#include "test_documents_window.moc"
