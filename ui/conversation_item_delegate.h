// A row of the sidebar's conversation list: the title; while searching, a second line with the
// text around the match (the match on a highlight) and, when the match is in a branch not shown,
// "in another branch" before it. The row a context menu is open for carries an outline, apart
// from the selection (which stays on the open chat). GUI thread only.
#pragma once

#include <QStyledItemDelegate>

namespace hearth {

class ConversationItemDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

    void setMenuRow(int row) { menuRow_ = row; }  // -1: no menu open
    int menuRow() const { return menuRow_; }
    // Where the match is drawn in a row laid out in option.rect (empty when it has none).
    QRect matchRect(const QStyleOptionViewItem& option, const QModelIndex& index) const;
    // What the match is drawn on: the highlight colour over the base, light enough for text.
    static QColor matchBackground(const QPalette& palette);

private:
    struct SnippetLine;
    SnippetLine layoutSnippet(const QStyleOptionViewItem& option, const QModelIndex& index) const;

    int menuRow_ = -1;
};

}  // namespace hearth
