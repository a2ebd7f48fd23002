// Issue 27's zh_CN coverage, part two: the window and its dialogs under the Chinese interface
// (InterfaceLanguage("zh_CN"): Hearth's catalogue and Qt's qtbase), offscreen. Every visible
// widget's words — texts, titles, tooltips, placeholders, items, menu actions, a message row's
// chips and notices — are checked for English (chinese_words.h): the main window without a model,
// with one, after a reply and with a load error; the menu; the settings with every tab; the model
// picker and Qt's file dialog it opens; the rename, delete and details dialogs. Message texts
// (what the user and the model wrote) and file names are data, not interface.
#include <QAbstractItemView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QGroupBox>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextEdit>

#include "tests/ui/chinese_words.h"
#include "tests/ui/gui_app.h"
#include "ui/interface_language.h"
#include "ui/message_view.h"
#include "ui/model_picker.h"

using namespace hearth;
using namespace hearth::test;

namespace {

// Collects the English found in widgets, each finding with where it was.
class Walker {
public:
    explicit Walker(QSet<QString> extra) : extra_(std::move(extra)) {}

    void check(const QString& where, const QString& text) {
        if (text.trimmed().isEmpty()) return;
        const QStringList words = englishWords(text, extra_);
        if (!words.isEmpty()) findings_ << where + ": " + words.join(',') + "  in \"" + text.left(120) + '"';
    }
    // Every visible widget under top (itself included).
    void walk(QWidget* top, const QString& scope) {
        QList<QWidget*> widgets{top};
        widgets += top->findChildren<QWidget*>();
        for (QWidget* w : widgets)
            if (w == top || w->isVisibleTo(top)) widget(w, scope + '/' + describe(w));
    }
    void actions(const QList<QAction*>& list, const QString& scope) {
        for (QAction* a : list) {
            if (!a->isVisible() || a->isSeparator()) continue;
            check(scope + " action", a->text());
            if (a->toolTip() != QString(a->text()).remove('&')) check(scope + " action tooltip", a->toolTip());
            if (a->menu()) actions(a->menu()->actions(), scope + '>' + a->text());
        }
    }
    void skipModel(const QAbstractItemModel* m) { dataModels_ << m; }
    const QStringList& findings() const { return findings_; }

private:
    static QString describe(QWidget* w) {
        return w->objectName().isEmpty() ? QString::fromLatin1(w->metaObject()->className()) : w->objectName();
    }
    void widget(QWidget* w, const QString& where) {
        if (w->isWindow()) check(where + " title", w->windowTitle());
        check(where + " tooltip", w->toolTip());
        check(where + " status tip", w->statusTip());
        if (auto* l = qobject_cast<QLabel*>(w)) check(where, l->text());
        if (auto* b = qobject_cast<QAbstractButton*>(w)) check(where, b->text());
        if (auto* e = qobject_cast<QLineEdit*>(w)) check(where + " placeholder", e->placeholderText());
        if (auto* e = qobject_cast<QPlainTextEdit*>(w)) check(where + " placeholder", e->placeholderText());
        if (auto* e = qobject_cast<QTextEdit*>(w)) check(where + " placeholder", e->placeholderText());
        if (auto* g = qobject_cast<QGroupBox*>(w)) check(where, g->title());
        if (auto* s = qobject_cast<QAbstractSpinBox*>(w)) check(where + " special value", s->specialValueText());
        if (auto* s = qobject_cast<QSpinBox*>(w)) check(where + " affixes", s->prefix() + ' ' + s->suffix());
        if (auto* s = qobject_cast<QDoubleSpinBox*>(w)) check(where + " affixes", s->prefix() + ' ' + s->suffix());
        if (auto* c = qobject_cast<QComboBox*>(w))
            for (int i = 0; i < c->count(); ++i)
                check(where + " item", c->itemText(i)),
                    check(where + " item tooltip", c->itemData(i, Qt::ToolTipRole).toString());
        if (auto* t = qobject_cast<QTabWidget*>(w))
            for (int i = 0; i < t->count(); ++i)
                check(where + " tab", t->tabText(i)), check(where + " tab tooltip", t->tabToolTip(i));
        if (auto* m = qobject_cast<QMenuBar*>(w)) actions(m->actions(), where);
        if (auto* m = qobject_cast<QMenu*>(w)) actions(m->actions(), where);
        if (auto* v = qobject_cast<MessageView*>(w)) messages(v, where);
        else if (auto* v = qobject_cast<QAbstractItemView*>(w)) items(v, where);
    }
    void items(QAbstractItemView* v, const QString& where) {
        QAbstractItemModel* m = v->model();
        if (!m || qobject_cast<QComboBox*>(v->parentWidget() ? v->parentWidget()->parentWidget() : nullptr)) return;
        for (int c = 0; c < m->columnCount(); ++c)
            check(where + " header", m->headerData(c, Qt::Horizontal).toString());
        if (dataModels_.contains(m)) return;  // file names: data
        for (int r = 0; r < std::min(m->rowCount(), 200); ++r) {
            const QModelIndex i = m->index(r, 0);
            check(where + " item", i.data().toString());
            check(where + " item tooltip", i.data(Qt::ToolTipRole).toString());
        }
    }
    // The view's own words: its rows' chips and its notices (messages are what people wrote).
    void messages(MessageView* v, const QString& where) {
        for (int r = 0; r < v->model()->rowCount(); ++r) {
            const QModelIndex i = v->model()->index(r, 0);
            if (!i.data(MessageListModel::RoleRole).isValid()) check(where + " notice", i.data().toString());
            for (const MessageDelegate::Hit& h : v->hitsAt(r))
                if (h.action != MessageDelegate::Action::CopyCode && h.action != MessageDelegate::Action::Source)
                    check(where + " chip", h.label);
        }
    }

    QSet<QString> extra_;
    QSet<const QAbstractItemModel*> dataModels_;
    QStringList findings_;
};

// Runs trigger; each modal dialog or popup menu that opens meanwhile goes to handle, which must
// close it (handle may open further ones the same way). False when none opened.
bool whileOpen(const std::function<void()>& trigger, const std::function<void(QWidget*)>& handle) {
    QSet<QWidget*> seen;
    if (QWidget* w = QApplication::activeModalWidget()) seen.insert(w);
    bool opened = false;
    QTimer poll;
    poll.setInterval(20);
    QObject::connect(&poll, &QTimer::timeout, [&] {
        QWidget* w = QApplication::activePopupWidget();
        if (!w) w = QApplication::activeModalWidget();
        if (!w || seen.contains(w) || !w->isVisible()) return;
        seen.insert(w);
        opened = true;
        poll.stop();
        handle(w);
        poll.start();
    });
    poll.start();
    trigger();
    QTest::qWait(50);
    return opened;
}

void close(QWidget* w) {
    if (auto* d = qobject_cast<QDialog*>(w)) d->reject();
    else w->close();
}

}  // namespace

class TestChineseUi : public QObject {
    Q_OBJECT
private slots:
    void init() { dir_ = std::make_unique<QTemporaryDir>(); }
    void standardButtonsAreChinese();
    void everyWindowIsChinese();
    void newChatTitleFollowsTheLanguage();

private:
    std::unique_ptr<QTemporaryDir> dir_;
};

// Qt's own words come from qtbase_zh_CN.qm (qt6-translations-l10n).
void TestChineseUi::standardButtonsAreChinese() {
    const InterfaceLanguage zh(QStringLiteral("zh_CN"));
    QVERIFY(zh.hasHearthCatalogue());
    QVERIFY2(zh.hasQtCatalogue(), "qtbase_zh_CN.qm is missing: install qt6-translations-l10n");
    QMessageBox box(QMessageBox::Question, "t", "t", QMessageBox::Ok | QMessageBox::Cancel | QMessageBox::Yes);
    QCOMPARE(box.button(QMessageBox::Ok)->text(), QString::fromUtf8("确定"));
    QCOMPARE(box.button(QMessageBox::Cancel)->text(), QString::fromUtf8("取消"));
    QCOMPARE(box.button(QMessageBox::Yes)->text(), QString::fromUtf8("是(&Y)"));
    QFileDialog files(nullptr, "t", dir_->path());
    files.setOption(QFileDialog::DontUseNativeDialog);
    QStringList english;
    for (QLabel* l : files.findChildren<QLabel*>()) english += englishWords(l->text());
    QVERIFY2(english.isEmpty(), qPrintable(english.join(',')));
}

void TestChineseUi::everyWindowIsChinese() {
    const InterfaceLanguage zh(QStringLiteral("zh_CN"));
    const QString model = smallModel(dir_->path());
    QSet<QString> extra = nameWords(QFileInfo(model).completeBaseName());
    extra += nameWords(QDir::home().dirName());  // the file dialog's places
    for (const QString& part : dir_->path().split('/', Qt::SkipEmptyParts)) extra += nameWords(part);
    Walker walker(extra);
    GuiApp app(dir_->path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    walker.walk(app.window.get(), "first start");
    // A chat before its first message, and a model.
    app.conversations->newConversation();
    app.window->loadModel(model);
    QTRY_VERIFY_WITH_TIMEOUT(app.models->model().has_value(), 20000);
    for (const QString& w : {app.models->model()->file.name, app.models->model()->file.family,
                             app.models->model()->file.architecture, app.models->model()->file.chatFormat})
        extra += nameWords(w);
    walker = Walker(extra);
    walker.walk(app.window.get(), "welcome");
    // A reply: the status line's figures and the rows' chips.
    ChatSettings s;
    s.maxTokens = 4;
    app.settings.setChatDefaults(s);
    typeAndSend(app, QString::fromUtf8("你好"));
    QTRY_VERIFY_WITH_TIMEOUT(!app.replies->generating(), 20000);
    QTRY_VERIFY(app.window->messageView()->isVisible());
    walker.walk(app.window.get(), "after a reply");
    walker.actions(app.window->menuBar()->actions(), "menu");
    // The settings, every tab.
    QVERIFY(whileOpen([&] { app.window->openSettings(); },
                      [&](QWidget* w) {
                          auto* tabs = w->findChild<QTabWidget*>();
                          for (int i = 0; tabs && i < tabs->count(); ++i) {
                              tabs->setCurrentIndex(i);
                              walker.walk(w, "settings tab " + QString::number(i));
                          }
                          close(w);
                      }));
    // The model picker, and the file dialog its "Open file…" opens.
    QVERIFY(whileOpen([&] { app.window->openModelPicker(); },
                      [&](QWidget* w) {
                          auto* picker = qobject_cast<ModelPicker*>(w);
                          QTRY_VERIFY_WITH_TIMEOUT(picker->inspected(), 20000);
                          walker.walk(w, "model picker");
                          QPushButton* open = nullptr;
                          for (QPushButton* b : w->findChildren<QPushButton*>())
                              if (b->text() == QCoreApplication::translate("hearth::ModelPicker", "Open file…"))
                                  open = b;
                          QVERIFY(open);
                          QVERIFY(whileOpen([&] { open->click(); },
                                            [&](QWidget* d) {
                                                QVERIFY2(qobject_cast<QFileDialog*>(d), d->metaObject()->className());
                                                for (auto* v : d->findChildren<QAbstractItemView*>())
                                                    if (v->objectName() != QLatin1String("sidebar"))
                                                        walker.skipModel(v->model());
                                                walker.walk(d, "file dialog");
                                                close(d);
                                            }));
                          close(w);
                      }));
    // The sidebar's dialogs: rename, delete (answered Cancel).
    QVERIFY(whileOpen([&] { app.window->sidebar()->renameAt(0); },
                      [&](QWidget* w) {
                          walker.walk(w, "rename");
                          close(w);
                      }));
    QVERIFY(whileOpen([&] { app.window->sidebar()->deleteAt(0); },
                      [&](QWidget* w) {
                          walker.walk(w, "delete");
                          close(w);
                      }));
    // A load error: its notice, and the details behind it (their technical part is English by design).
    const QString broken = dir_->path() + "/broken.gguf";
    QFile f(broken);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("GGUF\x03\0\0\0", 8);
    f.close();
    QSignalSpy failed(app.models.get(), &ModelController::failed);
    app.window->loadModel(broken);
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 20000);
    QTRY_VERIFY(app.window->messageView()->isVisible());
    walker.walk(app.window.get(), "load error");
    const int notice = app.messages()->rowCount() - 1;
    QVERIFY(clickChip(*app.window, notice, MessageDelegate::Action::Details));
    QMessageBox* details = nullptr;
    QTRY_VERIFY((details = app.window->findChild<QMessageBox*>("detailsDialog")) && details->isVisible());
    for (QLabel* l : details->findChildren<QLabel*>("qt_msgbox_informativelabel"))
        l->setObjectName("technical"), l->hide();
    walker.walk(details, "details");
    details->close();
    for (const QString& finding : walker.findings()) qWarning("%s", qPrintable(finding));
    QVERIFY2(walker.findings().isEmpty(),
             qPrintable(QString::number(walker.findings().size()) + " English texts (above)"));
}

// A chat without a message is stored untitled and shown as "New chat" in the language of the
// moment: made in the Chinese interface, it reads 新对话; after a restart in English, "New chat".
void TestChineseUi::newChatTitleFollowsTheLanguage() {
    qint64 id = 0;
    {
        const InterfaceLanguage zh(QStringLiteral("zh_CN"));
        GuiApp app(dir_->path());
        app.conversations->newConversation();
        id = app.conversations->current();
        QVERIFY(id != 0);
        QCOMPARE(QString::fromStdString((*app.store->conversation(id))->title), QString());
        const int row = app.conversations->list()->rowOf(id);
        QCOMPARE(app.conversations->list()->index(row).data().toString(), QString::fromUtf8("新对话"));
        QCOMPARE(app.window->windowTitle(), QString::fromUtf8("新对话 — Hearth"));
    }
    const InterfaceLanguage en(QStringLiteral("en"));
    GuiApp app(dir_->path());
    const int row = app.conversations->list()->rowOf(id);
    QCOMPARE(app.conversations->list()->index(row).data().toString(), QString("New chat"));
}

QTEST_MAIN(TestChineseUi)
#include "test_chinese_ui.moc"
