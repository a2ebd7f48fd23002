// The conversation's messages: a QListView with MessageDelegate (rows are painted, not widgets,
// so 1,000 messages open quickly). Follows the end while a reply streams unless the user has
// scrolled up (a "Jump to latest" button then floats over the bottom); double-click opens a message for selecting part of its text. A streamed reply
// is measured at most once per event-loop pass, and rows are laid out again only when its
// height changed (from cached sizes, in one pass).
#pragma once

#include <QListView>

class QToolButton;

#include "ui/message_delegate.h"

namespace hearth {

class MessageView : public QListView {
    Q_OBJECT
public:
    explicit MessageView(QWidget* parent = nullptr);
    MessageDelegate* messageDelegate() const { return delegate_; }
    // The chips of a row in viewport coordinates (tests click them).
    std::vector<MessageDelegate::Hit> hitsAt(int row) const;
    bool followsEnd() const { return followEnd_; }
    void jumpToLatest();
    void showRow(int row);  // scrolls row to the top of the view; the view stops following the end
    void setModel(QAbstractItemModel* model) override;
    void doItemsLayout() override;

protected:
    void resizeEvent(QResizeEvent* event) override;
    // The chip under the mouse is drawn tinted and shows a pointing hand.
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    void rowsChanged();
    void measureChangedRows();
    bool heightChanged(int row) const;
    void updateJumpButton();

    MessageDelegate* delegate_;
    QToolButton* jump_;
    bool followEnd_ = true;
    int firstChanged_ = -1, lastChanged_ = -1;  // rows whose text changed since the last measure
    QRect hoveredChip_;  // viewport coordinates; empty when the mouse is over none
};

}  // namespace hearth
