// Auto-scroll: the view follows the end when the scroll bar was at the bottom before the
// change; a user who scrolls up stops the following until they scroll back down.
#include "ui/message_view.h"

#include <QScrollBar>

namespace hearth {

MessageView::MessageView(QWidget* parent) : QListView(parent), delegate_(new MessageDelegate(this)) {
    setObjectName("messageView");
    setItemDelegate(delegate_);
    setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSelectionMode(QAbstractItemView::NoSelection);
    setEditTriggers(QAbstractItemView::DoubleClicked);
    setMouseTracking(true);
    setFrameShape(QFrame::NoFrame);
    setResizeMode(QListView::Adjust);
    setUniformItemSizes(false);
    // Sizes are computed in batches while the event loop runs, so a long chat opens at once.
    setLayoutMode(QListView::Batched);
    setBatchSize(100);
    verticalScrollBar()->setSingleStep(24);
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, [this](int v) {
        followEnd_ = v >= verticalScrollBar()->maximum() - 4;
    });
    connect(verticalScrollBar(), &QScrollBar::rangeChanged, this, [this](int, int max) {
        if (followEnd_) verticalScrollBar()->setValue(max);
    });
}

void MessageView::setModel(QAbstractItemModel* m) {
    QListView::setModel(m);
    connect(m, &QAbstractItemModel::modelReset, this, [this] { followEnd_ = true; rowsChanged(); });
    connect(m, &QAbstractItemModel::rowsInserted, this, &MessageView::rowsChanged);
    // A streamed row grows: its height is measured again (the others come from the size cache).
    connect(m, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex& first, const QModelIndex& last) {
        if (heightChanged(first.row(), last.row())) scheduleDelayedItemsLayout();
        rowsChanged();
    });
}

// A relayout measures every row; most streamed batches do not change the row's height.
bool MessageView::heightChanged(int first, int last) const {
    for (int row = first; row <= last; ++row) {
        const QModelIndex index = model()->index(row, 0);
        QStyleOptionViewItem option;
        initViewItemOption(&option);
        option.rect = visualRect(index);
        if (delegate_->sizeHint(option, index).height() != option.rect.height()) return true;
    }
    return false;
}

void MessageView::rowsChanged() {
    if (followEnd_) scrollToBottom();
}

void MessageView::resizeEvent(QResizeEvent* event) {
    QListView::resizeEvent(event);
    doItemsLayout();  // heights depend on the width
}

std::vector<MessageDelegate::Hit> MessageView::hitsAt(int row) const {
    const QModelIndex index = model()->index(row, 0);
    QStyleOptionViewItem option;
    initViewItemOption(&option);
    option.rect = visualRect(index);
    return delegate_->hits(option, index);
}

}  // namespace hearth
