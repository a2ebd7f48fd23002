// The snippet line keeps the match in view: text before it is dropped from the left (an
// ellipsis marks it) until the match sits within the first three quarters of the line.
#include "ui/conversation_item_delegate.h"

#include <QApplication>
#include <QPainter>

#include "app/chat/conversation_list_model.h"

namespace hearth {
namespace {

constexpr int kMargin = 6;  // left and right of the text, px
constexpr int kLineGap = 2;  // between the title and the snippet, px

bool searching(const QModelIndex& index) {
    const auto* list = qobject_cast<const ConversationListModel*>(index.model());
    return list && !list->filter().trimmed().isEmpty();
}

// The title's line (n = 0) and the snippet's (n = 1) in a row of option.rect.
QRect lineRect(const QStyleOptionViewItem& option, const QModelIndex& index, int n) {
    const int h = QFontMetrics(option.font).height();
    const QRect r = option.rect.adjusted(kMargin, 0, -kMargin, 0);
    if (!searching(index)) return QRect(r.left(), r.top() + (r.height() - h) / 2, r.width(), h);
    const int top = r.top() + (r.height() - 2 * h - kLineGap) / 2;
    return QRect(r.left(), top + n * (h + kLineGap), r.width(), h);
}

QFont italic(QFont font) {
    font.setItalic(true);
    return font;
}

}  // namespace

struct ConversationItemDelegate::SnippetLine {
    QRect line;  // null: the row has no snippet
    QString where;  // before the snippet, in italics
    int whereWidth = 0;
    QString before, match, after;  // the snippet as drawn (elided)
    QRect matchRect;
};

QColor ConversationItemDelegate::matchBackground(const QPalette& palette) {
    const QColor base = palette.color(QPalette::Base), mark = palette.color(QPalette::Highlight);
    constexpr float kMark = 0.35f;
    return QColor::fromRgbF(base.redF() + (mark.redF() - base.redF()) * kMark,
                            base.greenF() + (mark.greenF() - base.greenF()) * kMark,
                            base.blueF() + (mark.blueF() - base.blueF()) * kMark);
}

ConversationItemDelegate::SnippetLine ConversationItemDelegate::layoutSnippet(const QStyleOptionViewItem& option,
                                                                              const QModelIndex& index) const {
    SnippetLine s;
    const QString snippet = index.data(ConversationListModel::SnippetRole).toString();
    if (snippet.isEmpty() || !searching(index)) return s;
    const int start = index.data(ConversationListModel::MatchStartRole).toInt();
    const int length = index.data(ConversationListModel::MatchLengthRole).toInt();
    const QFontMetrics fm(option.font);
    s.line = lineRect(option, index, 1);
    s.where = index.data(ConversationListModel::WhereRole).toString();
    if (!s.where.isEmpty()) s.whereWidth = QFontMetrics(italic(option.font)).horizontalAdvance(s.where) + kMargin;
    const int width = std::max(0, s.line.width() - s.whereWidth);
    s.before = snippet.left(start);
    s.match = snippet.mid(start, length);
    while (s.before.size() > 1 && fm.horizontalAdvance(s.before + s.match) > width * 3 / 4)
        s.before = QChar(0x2026) + s.before.mid(2);
    if (fm.horizontalAdvance(s.before + s.match) > width) {
        s.before.clear();
        s.match = fm.elidedText(s.match, Qt::ElideRight, width);
    }
    const int beforeWidth = fm.horizontalAdvance(s.before), matchWidth = fm.horizontalAdvance(s.match);
    s.after = fm.elidedText(snippet.mid(start + length), Qt::ElideRight, width - beforeWidth - matchWidth);
    if (length > 0)
        s.matchRect = QRect(s.line.left() + s.whereWidth + beforeWidth, s.line.top(), matchWidth, s.line.height());
    return s;
}

QRect ConversationItemDelegate::matchRect(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    return layoutSnippet(option, index).matchRect;
}

QSize ConversationItemDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    if (searching(index)) size.rheight() += QFontMetrics(option.font).height() + kLineGap;
    return size;
}

void ConversationItemDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                                     const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString title = opt.text;
    opt.text.clear();  // the panel, selection and focus from the style; the text below
    const QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, opt.widget);

    const bool selected = opt.state & QStyle::State_Selected;
    const QPalette::ColorGroup group = !(opt.state & QStyle::State_Enabled) ? QPalette::Disabled
        : (opt.state & QStyle::State_Active)                                ? QPalette::Normal
                                                                            : QPalette::Inactive;
    const QColor text = opt.palette.color(group, selected ? QPalette::HighlightedText : QPalette::Text);
    const QFontMetrics fm(opt.font);
    painter->save();
    painter->setFont(opt.font);
    painter->setPen(text);
    const QRect titleLine = lineRect(opt, index, 0);
    painter->drawText(titleLine, Qt::AlignLeft | Qt::AlignVCenter,
                      fm.elidedText(title, Qt::ElideRight, titleLine.width()));

    const SnippetLine s = layoutSnippet(opt, index);
    if (!s.line.isNull()) {
        QColor muted = text;
        muted.setAlphaF(0.75f);
        QRect at = s.line;
        if (!s.where.isEmpty()) {
            painter->setFont(italic(opt.font));
            painter->setPen(muted);
            painter->drawText(at, Qt::AlignLeft | Qt::AlignVCenter, s.where);
            painter->setFont(opt.font);
            at.setLeft(at.left() + s.whereWidth);
        }
        painter->setPen(muted);
        painter->drawText(at, Qt::AlignLeft | Qt::AlignVCenter, s.before);
        if (!s.matchRect.isEmpty()) {
            painter->fillRect(s.matchRect, matchBackground(opt.palette));
            painter->setPen(opt.palette.color(group, QPalette::Text));
            painter->drawText(s.matchRect, Qt::AlignLeft | Qt::AlignVCenter, s.match);
            at.setLeft(s.matchRect.right() + 1);
        } else {
            at.setLeft(at.left() + fm.horizontalAdvance(s.before));
        }
        painter->setPen(muted);
        painter->drawText(at, Qt::AlignLeft | Qt::AlignVCenter, s.after);
    }

    if (index.row() == menuRow_) {  // the chat the open context menu acts on
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setPen(QPen(opt.palette.color(QPalette::Normal, QPalette::Highlight), 2));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(QRectF(opt.rect).adjusted(1.5, 1.5, -1.5, -1.5), 4, 4);
    }
    painter->restore();
}

}  // namespace hearth
