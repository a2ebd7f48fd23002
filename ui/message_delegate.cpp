// Geometry: each row is [margin][bubble with the document][footer chips][margin]. Hit
// rectangles come from the same layout() that paint() uses, so clicks land where chips are drawn.
#include "ui/message_delegate.h"

#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QMouseEvent>
#include <QPainter>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>

#include "app/message_list_model.h"

namespace hearth {

namespace {

constexpr int kMargin = 12, kPad = 10, kGap = 6;

QString roleOf(const QModelIndex& i) { return i.data(MessageListModel::RoleRole).toString(); }
bool isUser(const QModelIndex& i) { return roleOf(i) == QLatin1String("user"); }
bool isNotice(const QModelIndex& i) { return roleOf(i) == QLatin1String("error"); }

// Code blocks (fenced or indented; Qt's Markdown reader marks both with BlockCodeLanguage)
// get a monospace font and a shaded background; consecutive ones form one block to copy.
void styleCodeBlocks(QTextDocument* doc, QTextBlock from = {}) {
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    for (QTextBlock b = from.isValid() ? from : doc->begin(); b.isValid(); b = b.next()) {
        if (!b.blockFormat().hasProperty(QTextFormat::BlockCodeLanguage)) continue;
        QTextCursor c(b);
        QTextBlockFormat bf;
        bf.setBackground(QColor(127, 127, 127, 40));
        c.mergeBlockFormat(bf);
        c.select(QTextCursor::BlockUnderCursor);
        QTextCharFormat cf;
        cf.setFont(mono);
        cf.setFontFixedPitch(true);
        c.mergeCharFormat(cf);
    }
}

struct CodeBlock {
    QTextBlock first;
    QString text;
};

std::vector<CodeBlock> codeBlocks(QTextDocument* doc) {
    std::vector<CodeBlock> out;
    bool inCode = false;
    for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
        const bool code = b.blockFormat().hasProperty(QTextFormat::BlockCodeLanguage);
        if (code && !inCode) out.push_back({b, b.text()});
        else if (code) out.back().text += QLatin1Char('\n') + b.text();
        inCode = code;
    }
    return out;
}

// The last blank line after `from` that is outside a code fence (an even number of fences
// before it), or `from` when there is none: text before it will not change its Markdown meaning.
int lastParagraphBreak(const QString& text, int from) {
    int fences = 0, best = from;
    for (int i = text.indexOf(QLatin1String("```")); i >= 0 && i < from; i = text.indexOf(QLatin1String("```"), i + 3)) ++fences;
    for (int i = from; i < text.size(); ++i) {
        if (text.mid(i, 3) == QLatin1String("```")) ++fences, i += 2;
        else if (text[i] == QLatin1Char('\n') && i + 1 < text.size() && text[i + 1] == QLatin1Char('\n') && fences % 2 == 0) best = i + 2;
    }
    return best;
}

int footerHeight(const QStyleOptionViewItem& option) { return option.fontMetrics.height() + 8; }

}  // namespace

MessageDelegate::MessageDelegate(QObject* parent) : QStyledItemDelegate(parent) { documents_.setMaxCost(400); }

int MessageDelegate::textWidthFor(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const int full = option.rect.width() - 2 * kMargin - 2 * kPad;
    return std::max(80, isUser(index) ? full * 3 / 4 : full);
}

QString MessageDelegate::cacheKey(const QModelIndex& index, int textWidth) const {
    const qint64 id = index.data(MessageListModel::IdRole).toLongLong();
    return QStringLiteral("%1:%2:%3:%4")
        .arg(id)
        .arg(id == 0 ? index.row() : 0)
        .arg(index.data(MessageListModel::VersionRole).toInt())
        .arg(textWidth);
}

QTextDocument* MessageDelegate::streamingDocument(const QModelIndex& index, int textWidth) const {
    const qint64 id = index.data(MessageListModel::IdRole).toLongLong();
    const int version = index.data(MessageListModel::VersionRole).toInt();
    const QString text = index.data(Qt::DisplayRole).toString();
    Stream& s = stream_;
    if (s.id != id || s.width != textWidth || !text.startsWith(s.committedText)) {
        s = Stream{id, textWidth, -1, 0, 0, {}, std::make_unique<QTextDocument>()};
        s.doc->setDocumentMargin(0);
        s.doc->setTextWidth(textWidth);
    }
    if (s.version == version) return s.doc.get();
    s.version = version;
    QTextCursor c(s.doc.get());
    c.setPosition(s.committedPos);
    c.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
    c.removeSelectedText();
    const QTextBlock firstNew = s.doc->findBlock(s.committedPos);
    const int cut = lastParagraphBreak(text, s.committedChars);
    if (cut > s.committedChars) {
        if (s.committedPos > 0) c.insertBlock();
        c.insertMarkdown(text.mid(s.committedChars, cut - s.committedChars));
        s.committedChars = cut;
        s.committedText = text.left(cut);
        s.committedPos = c.position();
    }
    if (s.committedPos > 0) c.insertBlock();
    c.insertMarkdown(text.mid(s.committedChars) + QStringLiteral(" \u258D"));
    styleCodeBlocks(s.doc.get(), firstNew);
    return s.doc.get();
}

QTextDocument* MessageDelegate::document(const QModelIndex& index, int textWidth) const {
    if (index.data(MessageListModel::StreamingRole).toBool() && !isUser(index)) return streamingDocument(index, textWidth);
    const QString key = cacheKey(index, textWidth);
    if (QTextDocument* doc = documents_.object(key)) return doc;
    auto* doc = new QTextDocument;
    doc->setDocumentMargin(0);
    QString text = index.data(Qt::DisplayRole).toString();
    if (index.data(MessageListModel::StreamingRole).toBool()) text += QStringLiteral(" \u258D");
    // User text is shown as written; replies and notices are Markdown.
    if (isUser(index)) doc->setPlainText(text);
    else doc->setMarkdown(text);
    styleCodeBlocks(doc);
    doc->setTextWidth(textWidth);
    if (isUser(index)) doc->setTextWidth(std::min<qreal>(textWidth, doc->idealWidth() + 1));
    documents_.insert(key, doc);
    return doc;
}

MessageDelegate::Layout MessageDelegate::layout(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QTextDocument* doc = document(index, textWidthFor(option, index));
    const QSizeF size = doc->size();
    const int w = static_cast<int>(size.width()) + 2 * kPad;
    const int h = static_cast<int>(size.height()) + 2 * kPad;
    const QRect r = option.rect;
    const int left = isUser(index) ? r.right() - kMargin - w : r.left() + kMargin;
    Layout l;
    l.bubble = QRect(left, r.top() + kGap, isUser(index) ? w : r.width() - 2 * kMargin, h);
    l.textTopLeft = l.bubble.topLeft() + QPoint(kPad, kPad);
    l.footer = QRect(r.left() + kMargin, l.bubble.bottom() + 1, r.width() - 2 * kMargin, footerHeight(option));
    return l;
}

// Sizes are remembered apart from documents: laying out 1,000 rows then re-parses nothing.
QSize MessageDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const QString key = cacheKey(index, textWidthFor(option, index));
    if (const auto it = sizes_.constFind(key); it != sizes_.constEnd()) return *it;
    QStyleOptionViewItem o = option;
    o.rect.moveTopLeft({0, 0});
    const Layout l = layout(o, index);
    const QSize size(option.rect.width(), l.footer.bottom() + kGap);
    sizes_.insert(key, size);
    return size;
}

std::vector<MessageDelegate::Hit> MessageDelegate::hits(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    std::vector<Hit> out;
    const Layout l = layout(option, index);
    const QFontMetrics& fm = option.fontMetrics;
    for (const CodeBlock& c : codeBlocks(document(index, textWidthFor(option, index)))) {
        const QRectF br = c.first.layout()->boundingRect().translated(c.first.layout()->position());
        const QString label = tr("Copy code");
        const int cw = fm.horizontalAdvance(label) + 12;
        const QPoint topRight = l.textTopLeft + QPoint(static_cast<int>(l.bubble.width() - 2 * kPad), static_cast<int>(br.top()));
        out.push_back({Action::CopyCode, QRect(topRight.x() - cw, topRight.y(), cw, fm.height() + 4), label, c.text});
    }
    if (isNotice(index) || index.data(MessageListModel::StreamingRole).toBool()) return out;
    std::vector<std::pair<Action, QString>> chips = {{Action::CopyMessage, tr("Copy")}};
    if (isUser(index)) chips.push_back({Action::Edit, tr("Edit")});
    if (index.data(MessageListModel::IsLastAssistantRole).toBool()) chips.push_back({Action::Regenerate, tr("Regenerate")});
    const int n = index.data(MessageListModel::SiblingCountRole).toInt();
    if (n > 1) {
        const int i = index.data(MessageListModel::SiblingIndexRole).toInt();
        chips.insert(chips.begin(), {{Action::PreviousBranch, QStringLiteral("<")},
                                     {Action::NextBranch, QStringLiteral("%1/%2 >").arg(i + 1).arg(n)}});
    }
    int x = l.bubble.left();
    if (isUser(index)) {
        int total = 0;
        for (const auto& [a, label] : chips) total += fm.horizontalAdvance(label) + 16;
        x = l.bubble.right() - total;
    }
    for (const auto& [action, label] : chips) {
        const int cw = fm.horizontalAdvance(label) + 12;
        out.push_back({action, QRect(x, l.footer.top() + 2, cw, l.footer.height() - 4), label, {}});
        x += cw + 4;
    }
    return out;
}

void MessageDelegate::paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const Layout l = layout(option, index);
    const QPalette& pal = option.palette;
    p->save();
    p->setRenderHint(QPainter::Antialiasing);
    if (isUser(index) || isNotice(index)) {
        QColor fill = isNotice(index) ? QColor(220, 60, 60, 40) : pal.color(QPalette::Highlight);
        if (isUser(index)) fill.setAlpha(45);
        p->setPen(isNotice(index) ? QPen(QColor(200, 60, 60), 1) : Qt::NoPen);
        p->setBrush(fill);
        p->drawRoundedRect(l.bubble, 8, 8);
    }
    QTextDocument* doc = document(index, textWidthFor(option, index));
    p->translate(l.textTopLeft);
    QAbstractTextDocumentLayout::PaintContext ctx;
    ctx.palette = pal;
    // Draw only what is visible: a long streamed reply is mostly outside the viewport.
    ctx.clip = p->hasClipping() ? p->clipBoundingRect() : QRectF(option.rect).translated(-l.textTopLeft);
    doc->documentLayout()->draw(p, ctx);
    p->translate(-l.textTopLeft);
    for (const Hit& h : hits(option, index)) {
        const bool hover = (option.state & QStyle::State_MouseOver) != 0;
        p->setPen(pal.color(hover ? QPalette::Text : QPalette::PlaceholderText));
        p->setBrush(QColor(127, 127, 127, h.action == Action::CopyCode ? 60 : 25));
        p->drawRoundedRect(h.rect, 4, 4);
        p->drawText(h.rect, Qt::AlignCenter, h.label);
    }
    p->restore();
}

bool MessageDelegate::editorEvent(QEvent* event, QAbstractItemModel* model, const QStyleOptionViewItem& option,
                                  const QModelIndex& index) {
    if (event->type() == QEvent::MouseButtonRelease) {
        const QPoint pos = static_cast<QMouseEvent*>(event)->position().toPoint();
        for (const Hit& h : hits(option, index)) {
            if (!h.rect.contains(pos)) continue;
            if (h.action == Action::CopyCode) QApplication::clipboard()->setText(h.payload);
            if (h.action == Action::CopyMessage) QApplication::clipboard()->setText(index.data().toString());
            emit actionTriggered(h.action, index, h.payload);
            return true;
        }
    }
    return QStyledItemDelegate::editorEvent(event, model, option, index);
}

QWidget* MessageDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex&) const {
    auto* browser = new QTextBrowser(parent);
    browser->setObjectName("messageSelection");
    browser->setReadOnly(true);
    browser->setFrameShape(QFrame::NoFrame);
    browser->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    return browser;
}

void MessageDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
    auto* browser = static_cast<QTextBrowser*>(editor);
    if (isUser(index)) browser->setPlainText(index.data().toString());
    else browser->setMarkdown(index.data().toString());
    styleCodeBlocks(browser->document());
}

void MessageDelegate::updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const Layout l = layout(option, index);
    editor->setGeometry(l.bubble.adjusted(kPad - 2, kPad - 2, -kPad + 2, -kPad + 2));
}

}  // namespace hearth
