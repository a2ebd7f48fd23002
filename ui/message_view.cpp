// Auto-scroll: the view follows the end when the scroll bar was at the bottom before the
// change; a user who scrolls up stops the following until they scroll back down.
#include "ui/message_view.h"

#include <QMouseEvent>
#include <QScrollBar>
#include <QToolButton>

#include "app/chat/message_list_model.h"

namespace hearth {

MessageView::MessageView(QWidget* parent)
    : QListView(parent), delegate_(new MessageDelegate(this)), jump_(new QToolButton(viewport())) {
    jump_->setObjectName("jumpToLatest");
    jump_->setText(tr("↓ Jump to latest"));
    jump_->setToolTip(tr("Scroll to the newest message and follow the reply"));
    jump_->setCursor(Qt::PointingHandCursor);
    jump_->hide();
    connect(jump_, &QToolButton::clicked, this, &MessageView::jumpToLatest);
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
    setBatchSize(100);
    verticalScrollBar()->setSingleStep(24);
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, [this](int v) {
        followEnd_ = v >= verticalScrollBar()->maximum() - 4;
        updateJumpButton();
    });
    connect(verticalScrollBar(), &QScrollBar::rangeChanged, this, [this](int, int max) {
        if (followEnd_) verticalScrollBar()->setValue(max);
        updateJumpButton();
    });
}

void MessageView::setModel(QAbstractItemModel* m) {
    QListView::setModel(m);
    connect(m, &QAbstractItemModel::modelReset, this, [this] {
        followEnd_ = true;
        rowsChanged();
    });
    connect(m, &QAbstractItemModel::rowsInserted, this, &MessageView::rowsChanged);
    // A streamed row grows: its height is measured again (the others come from the size cache),
    // once for all the batches that arrived in one pass of the event loop.
    connect(m, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex& first, const QModelIndex& last, const QList<int>& roles) {
                if (roles == QList<int>{MessageListModel::IsLastAssistantRole}) return;  // a chip, not a height
                const bool queued = firstChanged_ >= 0;
                firstChanged_ = queued ? std::min(firstChanged_, first.row()) : first.row();
                lastChanged_ = std::max(lastChanged_, last.row());
                if (!queued) QMetaObject::invokeMethod(this, &MessageView::measureChangedRows, Qt::QueuedConnection);
            });
}

void MessageView::measureChangedRows() {
    if (firstChanged_ < 0 || !model()) return;
    bool changed = false;
    for (int row = firstChanged_; row <= std::min(lastChanged_, model()->rowCount() - 1); ++row)
        changed = changed || heightChanged(row);
    firstChanged_ = lastChanged_ = -1;
    if (changed) doItemsLayout();
    rowsChanged();
}

// A relayout measures every row; most streamed batches do not change the row's height. A row
// not placed yet (a batched layout is running) is measured by that layout.
bool MessageView::heightChanged(int row) const {
    const QModelIndex index = model()->index(row, 0);
    QStyleOptionViewItem option;
    initViewItemOption(&option);
    option.rect = visualRect(index);
    if (!option.rect.isValid()) return false;
    return delegate_->sizeHint(option, index).height() != option.rect.height();
}

// Sizes are measured in batches while the event loop runs, so a long chat opens at once. Once
// every row is measured, one pass reads cached sizes and parses nothing, while a batched layout
// would leave the rows past its first batch unplaced (and unpainted) for several passes.
void MessageView::doItemsLayout() {
    const int n = model() ? model()->rowCount() : 0;
    QStyleOptionViewItem option;
    initViewItemOption(&option);
    option.rect = viewport()->rect();
    const bool measured = n <= batchSize() ||
        (delegate_->isMeasured(option, model()->index(n - 1, 0)) &&
         delegate_->isMeasured(option, model()->index(n - 2, 0)));
    setLayoutMode(measured ? QListView::SinglePass : QListView::Batched);
    QListView::doItemsLayout();
}

void MessageView::jumpToLatest() {
    followEnd_ = true;
    scrollToBottom();
    updateJumpButton();
}

void MessageView::showRow(int row) {
    if (!model() || row < 0 || row >= model()->rowCount()) return;
    followEnd_ = false;
    scrollTo(model()->index(row, 0), QAbstractItemView::PositionAtTop);
    updateJumpButton();
}

// Centred over the bottom of the messages while the view does not follow the end.
void MessageView::updateJumpButton() {
    const bool show = !followEnd_ && verticalScrollBar()->maximum() > 0;
    if (show) {
        jump_->adjustSize();
        const QRect area = viewport()->rect();
        jump_->move(area.center().x() - jump_->width() / 2, area.bottom() - jump_->height() - 12);
        jump_->raise();
    }
    jump_->setVisible(show);
}

void MessageView::rowsChanged() {
    if (followEnd_) scrollToBottom();
}

void MessageView::resizeEvent(QResizeEvent* event) {
    QListView::resizeEvent(event);
    doItemsLayout();  // heights depend on the width
    updateJumpButton();
}

void MessageView::mouseMoveEvent(QMouseEvent* event) {
    QListView::mouseMoveEvent(event);
    QRect chip;
    const QPoint pos = event->position().toPoint();
    if (const QModelIndex index = indexAt(pos); index.isValid() && state() == NoState)
        for (const MessageDelegate::Hit& h : hitsAt(index.row()))
            if (h.rect.contains(pos) && h.enabled && h.action != MessageDelegate::Action::Marker &&
                h.action != MessageDelegate::Action::BranchPosition)
                chip = h.rect;
    if (chip == hoveredChip_) return;
    viewport()->update(hoveredChip_ | chip);
    hoveredChip_ = chip;
    if (chip.isEmpty()) viewport()->unsetCursor();
    else viewport()->setCursor(Qt::PointingHandCursor);
}

void MessageView::leaveEvent(QEvent* event) {
    QListView::leaveEvent(event);
    viewport()->update(hoveredChip_);
    hoveredChip_ = {};
    viewport()->unsetCursor();
}

std::vector<MessageDelegate::Hit> MessageView::hitsAt(int row) const {
    const QModelIndex index = model()->index(row, 0);
    QStyleOptionViewItem option;
    initViewItemOption(&option);
    option.rect = visualRect(index);
    return delegate_->hits(option, index);
}

}  // namespace hearth
