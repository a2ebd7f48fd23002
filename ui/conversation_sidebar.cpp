// Search runs 200 ms after the last keystroke so typing stays smooth on large stores. A right
// button press does not select (the selection is the open chat); the menu's chat is outlined.
#include "ui/conversation_sidebar.h"

#include <QInputDialog>
#include <QKeyEvent>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QMouseEvent>
#include <QMessageBox>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include "app/chat/conversation_controller.h"
#include "ui/appearance.h"
#include "ui/conversation_item_delegate.h"

namespace hearth {

ConversationSidebar::ConversationSidebar(ConversationController& conversations, QWidget* parent)
    : QWidget(parent),
      conversations_(conversations),
      newChat_(new QPushButton(tr("New chat"))),
      search_(new QLineEdit),
      list_(new QListView),
      delegate_(new ConversationItemDelegate(this)),
      searchDelay_(new QTimer(this)) {
    newChat_->setObjectName("newChatButton");
    search_->setObjectName("searchField");
    list_->setObjectName("conversationList");
    search_->setPlaceholderText(tr("Search chats…"));
    search_->setClearButtonEnabled(true);
    list_->setModel(conversations_.list());
    list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    list_->setContextMenuPolicy(Qt::CustomContextMenu);
    list_->setTextElideMode(Qt::ElideRight);
    list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    list_->setItemDelegate(delegate_);
    list_->setUniformItemSizes(false);  // search results have a second line
    list_->installEventFilter(this);
    list_->viewport()->installEventFilter(this);
    auto* model = new QPushButton(tr("Model…"));
    auto* settings = new QPushButton(tr("Settings"));
    model->setObjectName("modelButton");
    settings->setObjectName("settingsButton");
    // Theme icons (ui/appearance.h); a name the theme lacks leaves the word alone.
    newChat_->setIcon(themeIcon(QStringLiteral("list-add")));
    model->setIcon(themeIcon(QStringLiteral("document-open")));
    settings->setIcon(themeIcon(QStringLiteral("configure")));
    search_->addAction(themeIcon(QStringLiteral("edit-find")), QLineEdit::LeadingPosition);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 4, 8);
    layout->addWidget(newChat_);
    layout->addWidget(search_);
    layout->addWidget(list_, 1);
    layout->addWidget(model);
    layout->addWidget(settings);
    searchDelay_->setSingleShot(true);
    searchDelay_->setInterval(200);
    connect(search_, &QLineEdit::textChanged, searchDelay_, qOverload<>(&QTimer::start));
    connect(searchDelay_, &QTimer::timeout, this, [this] {
        conversations_.search(search_->text());
        selectCurrent();
    });
    connect(newChat_, &QPushButton::clicked, this, [this] { conversations_.newConversation(); });
    connect(list_, &QListView::clicked, this, [this](const QModelIndex& i) {
        const qint64 id = conversations_.list()->idAt(i.row());
        const qint64 at = i.data(ConversationListModel::MatchMessageRole).toLongLong();
        if (at != 0) conversations_.openAt(id, at);
        else conversations_.openConversation(id);
    });
    connect(list_, &QListView::customContextMenuRequested, this, &ConversationSidebar::showMenu);
    connect(model, &QPushButton::clicked, this, &ConversationSidebar::modelPickerRequested);
    connect(settings, &QPushButton::clicked, this, &ConversationSidebar::settingsRequested);
    connect(conversations_.list(), &QAbstractItemModel::modelReset, this, &ConversationSidebar::selectCurrent);
}

void ConversationSidebar::focusSearch() {
    search_->setFocus();
    search_->selectAll();
}

void ConversationSidebar::selectCurrent() {
    const int row = conversations_.list()->rowOf(conversations_.current());
    list_->setCurrentIndex(row >= 0 ? conversations_.list()->index(row) : QModelIndex());
}

bool ConversationSidebar::eventFilter(QObject* watched, QEvent* event) {
    if (watched == list_->viewport()) {
        const QEvent::Type type = event->type();
        const bool press = type == QEvent::MouseButtonPress || type == QEvent::MouseButtonDblClick ||
            type == QEvent::MouseButtonRelease;
        if (press && static_cast<QMouseEvent*>(event)->button() == Qt::RightButton) return true;  // the menu follows
        return QWidget::eventFilter(watched, event);
    }
    if (watched == list_ && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        const int row = list_->currentIndex().row();
        if (key == Qt::Key_F2 && row >= 0) return renameAt(row), true;
        if (key == Qt::Key_Delete && row >= 0) return deleteAt(row), true;
    }
    return QWidget::eventFilter(watched, event);
}

void ConversationSidebar::showMenu(const QPoint& pos) {
    const int row = list_->indexAt(pos).row();
    QMenu menu(this);
    menu.setObjectName("conversationMenu");
    if (row >= 0) {
        const qint64 id = conversations_.list()->idAt(row);
        menu.addAction(tr("Rename…"), this, [this, row] { renameAt(row); });
        menu.addAction(tr("Delete…"), this, [this, row] { deleteAt(row); });
        menu.addSeparator();
        menu.addAction(tr("Export…"), this, [this, id] { emit exportRequested(id); });
    }
    menu.addAction(tr("Export all…"), this, &ConversationSidebar::exportAllRequested);
    menu.addAction(tr("Import…"), this, &ConversationSidebar::importRequested);
    delegate_->setMenuRow(row);
    list_->viewport()->update();
    menu.exec(list_->viewport()->mapToGlobal(pos));
    delegate_->setMenuRow(-1);
    list_->viewport()->update();
}

void ConversationSidebar::renameAt(int row) {
    ConversationListModel* m = conversations_.list();
    bool accepted = false;
    const QString title = QInputDialog::getText(this, tr("Rename chat"), tr("Title:"), QLineEdit::Normal,
                                                m->index(row).data().toString(), &accepted);
    if (accepted) conversations_.renameConversation(m->idAt(row), title);
}

void ConversationSidebar::deleteAt(int row) {
    ConversationListModel* m = conversations_.list();
    QMessageBox box(QMessageBox::Warning, tr("Delete chat"),
                    tr("Delete “%1” and all its messages? This cannot be undone.").arg(m->index(row).data().toString()),
                    QMessageBox::Cancel, this);
    box.setObjectName("deleteConfirmation");
    QPushButton* del = box.addButton(tr("Delete"), QMessageBox::DestructiveRole);
    box.setDefaultButton(QMessageBox::Cancel);
    box.exec();
    if (box.clickedButton() == del) conversations_.deleteConversation(m->idAt(row));
}

}  // namespace hearth
