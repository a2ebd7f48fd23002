// The conversation's messages: a QListView with MessageDelegate (rows are painted, not widgets,
// so 1,000 messages open quickly). Follows the end while a reply streams unless the user has
// scrolled up; double-click opens a message for selecting part of its text.
#pragma once

#include <QListView>

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
    void setModel(QAbstractItemModel* model) override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void rowsChanged();
    bool heightChanged(int first, int last) const;

    MessageDelegate* delegate_;
    bool followEnd_ = true;
};

}  // namespace hearth
