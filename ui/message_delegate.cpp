// Geometry: each row is [margin][bubble with the document][footer chips][margin]. Hit
// rectangles come from the same layout() that paint() uses, so clicks land where chips are drawn.
#include "ui/message_delegate.h"

#include <QAbstractScrollArea>
#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>

#include "app/chat/message_list_model.h"
#include "app/docs/passages.h"

namespace hearth {

namespace {

constexpr int kMargin = 12, kPad = 10, kGap = 6, kReasoningIndent = 12;

std::optional<ChatRole> roleOf(const QModelIndex& i) {
    const QVariant v = i.data(MessageListModel::RoleRole);
    return v.isValid() ? std::optional(v.value<ChatRole>()) : std::nullopt;
}
bool isUser(const QModelIndex& i) { return roleOf(i) == ChatRole::User; }
bool isNotice(const QModelIndex& i) { return !roleOf(i); }
QString answerOf(const QModelIndex& i) { return i.data(MessageListModel::AnswerRole).toString(); }
bool hasReasoning(const QModelIndex& i) {
    return i.data(MessageListModel::ReasoningOpenRole).toBool() ||
        !i.data(MessageListModel::ReasoningRole).toString().isEmpty();
}
bool reasoningExpanded(const QModelIndex& i) {
    return hasReasoning(i) && i.data(MessageListModel::ReasoningExpandedRole).toBool();
}

// "▸ Thinking…" while the model reasons, "▸ Reasoning" once it answers (▾ when expanded).
QString reasoningHeader(const QModelIndex& i) {
    const bool thinking =
        i.data(MessageListModel::ReasoningOpenRole).toBool() && i.data(MessageListModel::StreamingRole).toBool();
    const QString label = thinking ? MessageDelegate::tr("Thinking…") : MessageDelegate::tr("Reasoning");
    return (reasoningExpanded(i) ? QStringLiteral("▾ ") : QStringLiteral("▸ ")) + label;
}

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

bool isCodeBlock(const QTextBlock& b) { return b.blockFormat().hasProperty(QTextFormat::BlockCodeLanguage); }

// The code blocks that begin between docTop and docBottom (document coordinates): painting a
// long streamed reply looks only at its visible blocks. A block's text runs to its end.
std::vector<CodeBlock> codeBlocks(QTextDocument* doc, qreal docTop = -1, qreal docBottom = 1e18) {
    std::vector<CodeBlock> out;
    QTextBlock b = doc->begin();
    if (docTop > 0) b = doc->findBlock(doc->documentLayout()->hitTest(QPointF(0, docTop), Qt::FuzzyHit));
    bool inCode = b.previous().isValid() && isCodeBlock(b.previous());  // begun above: not listed
    bool listing = false;
    for (; b.isValid(); b = b.next()) {
        const bool code = isCodeBlock(b);
        if (code && !inCode) {
            if (b.layout()->position().y() > docBottom) break;
            out.push_back({b, b.text()});
            listing = true;
        } else if (code && listing) {
            out.back().text += QLatin1Char('\n') + b.text();
        } else if (!code && b.layout()->position().y() > docBottom) {
            break;
        }
        if (!code) listing = false;
        inCode = code;
    }
    return out;
}

// Where text that is final ends in the unparsed tail of a streamed reply: after its last blank
// line outside a code fence (the tail starts outside one), or 0 when there is none. Markdown
// before a blank line outside a fence does not change its meaning with what follows.
qsizetype lastParagraphBreak(QStringView tail) {
    bool inFence = false;
    qsizetype best = 0;
    for (qsizetype i = 0; i + 1 < tail.size(); ++i) {
        if (tail[i] == QLatin1Char('`') && tail.sliced(i).startsWith(QLatin1String("```"))) inFence = !inFence, i += 2;
        else if (tail[i] == QLatin1Char('\n') && tail[i + 1] == QLatin1Char('\n') && !inFence) best = i + 2;
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

MessageDelegate::DocKey MessageDelegate::docKey(const QModelIndex& index, int textWidth) const {
    return DocKey{index.data(MessageListModel::TextEpochRole).toULongLong(),
                  index.data(MessageListModel::VersionRole).toInt(), textWidth};
}

QTextDocument* MessageDelegate::streamingDocument(const QModelIndex& index, int textWidth) const {
    const quint64 epoch = index.data(MessageListModel::TextEpochRole).toULongLong();
    const int version = index.data(MessageListModel::VersionRole).toInt();
    Stream& s = stream_;
    if (!s.doc || s.epoch != epoch) {
        s = Stream{epoch, -1, 0, 0, std::make_unique<QTextDocument>()};
        s.doc->setDocumentMargin(0);
        s.doc->setUndoRedoEnabled(false);
    }
    if (s.doc->textWidth() != textWidth) s.doc->setTextWidth(textWidth);  // a new layout, no parsing
    if (s.version == version) return s.doc.get();
    s.version = version;
    const QString text = answerOf(index);
    QTextCursor c(s.doc.get());
    c.beginEditBlock();  // one layout of the changed blocks for the whole update
    c.setPosition(s.committedPos);
    c.setPosition(s.doc->characterCount() - 1, QTextCursor::KeepAnchor);  // the end, without a layout
    c.removeSelectedText();
    const QTextBlock firstNew = s.doc->findBlock(s.committedPos);
    const auto cut = static_cast<int>(
        lastParagraphBreak(QStringView(text).sliced(std::min<qsizetype>(s.committedChars, text.size()))));
    if (cut > 0) {
        if (s.committedPos > 0) c.insertBlock();
        c.insertMarkdown(text.mid(s.committedChars, cut));
        s.committedChars += cut;
        s.committedPos = c.position();
    }
    if (s.committedPos > 0) c.insertBlock();
    c.insertMarkdown(text.mid(s.committedChars) + QStringLiteral(" \u258D"));
    styleCodeBlocks(s.doc.get(), firstNew);
    c.endEditBlock();
    return s.doc.get();
}

QTextDocument* MessageDelegate::document(const QModelIndex& index, int textWidth) const {
    if (index.data(MessageListModel::StreamingRole).toBool() && !isUser(index))
        return streamingDocument(index, textWidth);
    const DocKey key = docKey(index, textWidth);
    if (QTextDocument* doc = documents_.object(key)) return doc;
    auto* doc = new QTextDocument;
    doc->setDocumentMargin(0);
    doc->setUndoRedoEnabled(false);
    QString text = answerOf(index);
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

// Reasoning is plain text (models reason in loose prose; parsing it as Markdown would cost a
// streamed reply a re-parse per batch while it is shown).
QTextDocument* MessageDelegate::reasoningDocument(const QModelIndex& index, int textWidth) const {
    if (!reasoningExpanded(index)) return nullptr;
    const DocKey key = docKey(index, textWidth);
    if (QTextDocument* doc = reasoningDocuments_.object(key)) return doc;
    auto* doc = new QTextDocument;
    doc->setDocumentMargin(0);
    doc->setUndoRedoEnabled(false);
    doc->setPlainText(index.data(MessageListModel::ReasoningRole).toString());
    doc->setTextWidth(textWidth);
    reasoningDocuments_.insert(key, doc);
    return doc;
}

// A row with reasoning: [header][reasoning, when expanded][answer] inside the bubble.
MessageDelegate::Layout MessageDelegate::layout(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const int textWidth = textWidthFor(option, index);
    QTextDocument* doc = document(index, textWidth);
    const QSizeF size = doc->size();
    Layout l;
    int above = 0;  // the header's and the reasoning's height above the answer
    if (hasReasoning(index)) {
        const QFontMetrics& fm = option.fontMetrics;
        l.reasoningHeader = QRect(0, 0, fm.horizontalAdvance(reasoningHeader(index)) + 12, fm.height() + 4);
        above = l.reasoningHeader.height() + kGap;
        if (QTextDocument* reasoning = reasoningDocument(index, textWidth - kReasoningIndent))
            above += static_cast<int>(reasoning->size().height()) + kGap;
    }
    const int w = static_cast<int>(size.width()) + 2 * kPad;
    const int h = static_cast<int>(size.height()) + 2 * kPad + above;
    const QRect r = option.rect;
    const int left = isUser(index) ? r.right() - kMargin - w : r.left() + kMargin;
    l.bubble = QRect(left, r.top() + kGap, isUser(index) ? w : r.width() - 2 * kMargin, h);
    if (!l.reasoningHeader.isEmpty()) {
        l.reasoningHeader.moveTopLeft(l.bubble.topLeft() + QPoint(kPad, kPad));
        l.reasoningTopLeft = l.reasoningHeader.bottomLeft() + QPoint(kReasoningIndent, kGap + 1);
    }
    l.textTopLeft = l.bubble.topLeft() + QPoint(kPad, kPad + above);
    l.footer = QRect(r.left() + kMargin, l.bubble.bottom() + 1, r.width() - 2 * kMargin, footerHeight(option));
    if (!index.data(MessageListModel::SourcesRole).toString().isEmpty())
        l.sources = l.footer.translated(0, l.footer.height());
    return l;
}

// Sizes are remembered apart from documents: laying out 1,000 rows then re-parses nothing.
// The streamed row is measured each time (its document is updated in place, not re-parsed).
QSize MessageDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const bool streaming = index.data(MessageListModel::StreamingRole).toBool();
    const DocKey key = docKey(index, textWidthFor(option, index));
    if (!streaming)
        if (const auto it = sizes_.constFind(key); it != sizes_.constEnd()) return *it;
    QStyleOptionViewItem o = option;
    o.rect.moveTopLeft({0, 0});
    const Layout l = layout(o, index);
    const QSize size(option.rect.width(), (l.sources.isEmpty() ? l.footer : l.sources).bottom() + kGap);
    if (!streaming) sizes_.insert(key, size);
    return size;
}

QString MessageDelegate::renderedText(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    return document(index, textWidthFor(option, index))->toPlainText();
}

QString MessageDelegate::renderedReasoning(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const QTextDocument* doc = reasoningDocument(index, textWidthFor(option, index) - kReasoningIndent);
    return doc ? doc->toPlainText() : QString();
}

bool MessageDelegate::isMeasured(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    return index.data(MessageListModel::StreamingRole).toBool() ||
        sizes_.contains(docKey(index, textWidthFor(option, index)));
}

std::vector<MessageDelegate::Hit> MessageDelegate::hits(const QStyleOptionViewItem& option,
                                                        const QModelIndex& index) const {
    return visibleHits(option, index, -1, 1e18);
}

std::vector<MessageDelegate::Hit> MessageDelegate::visibleHits(const QStyleOptionViewItem& option,
                                                               const QModelIndex& index, qreal docTop,
                                                               qreal docBottom) const {
    std::vector<Hit> out;
    const Layout l = layout(option, index);
    const QFontMetrics& fm = option.fontMetrics;
    for (const CodeBlock& c : codeBlocks(document(index, textWidthFor(option, index)), docTop, docBottom)) {
        const QRectF br = c.first.layout()->boundingRect().translated(c.first.layout()->position());
        const QString label = tr("Copy code");
        const int cw = fm.horizontalAdvance(label) + 12;
        const QPoint topRight =
            l.textTopLeft + QPoint(static_cast<int>(l.bubble.width() - 2 * kPad), static_cast<int>(br.top()));
        out.push_back({Action::CopyCode, QRect(topRight.x() - cw, topRight.y(), cw, fm.height() + 4), label, c.text});
    }
    if (!l.reasoningHeader.isEmpty())
        out.push_back({Action::ToggleReasoning, l.reasoningHeader, reasoningHeader(index), {}});
    if (index.data(MessageListModel::StreamingRole).toBool()) return out;
    std::vector<std::pair<Action, QString>> chips;
    if (isNotice(index)) {
        if (index.data(MessageListModel::NoticeActionRole).toString() == QLatin1String("save-copy"))
            chips.push_back({Action::SaveCopy, tr("Save a copy…")});
        if (!index.data(MessageListModel::NoticeDetailsRole).toString().isEmpty())
            chips.push_back({Action::Details, tr("Details…")});
    } else {
        const QString ending = index.data(MessageListModel::EndingRole).toString();
        if (ending == QLatin1String("stopped")) chips.push_back({Action::Marker, tr("stopped")});
        if (ending == QLatin1String("interrupted")) chips.push_back({Action::Marker, tr("interrupted")});
        // Which model wrote the reply, when the chat's replies come from more than one.
        if (const QString model = index.data(MessageListModel::ModelLabelRole).toString(); !model.isEmpty())
            chips.insert(chips.begin(), {Action::Marker, model});
        chips.push_back({Action::CopyMessage, tr("Copy")});
    }
    if (isUser(index)) chips.push_back({Action::Edit, tr("Edit")});
    if (index.data(MessageListModel::IsLastAssistantRole).toBool())
        chips.push_back({Action::Regenerate, tr("Regenerate")});
    const int n = index.data(MessageListModel::SiblingCountRole).toInt();
    if (n > 1) {
        const int i = index.data(MessageListModel::SiblingIndexRole).toInt();
        chips.insert(chips.begin(),
                     {{Action::PreviousBranch, QStringLiteral("<")},
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
    if (!l.sources.isEmpty()) sourceHits(option, index, l.sources, out);
    return out;
}

// "Sources (~812 tokens): handbook.txt ¶150  notes.md  +3": as many as the line holds,
// then one chip for the rest (each opens the list of all of them at its own).
void MessageDelegate::sourceHits(const QStyleOptionViewItem& option, const QModelIndex& index, const QRect& line,
                                 std::vector<Hit>& out) const {
    const std::vector<TurnSource> sources =
        sourcesFromJson(index.data(MessageListModel::SourcesRole).toString().toStdString());
    if (sources.empty()) return;
    const QFontMetrics& fm = option.fontMetrics;
    const QLocale locale;
    int tokens = 0;
    for (const TurnSource& s : sources) tokens += s.tokens;
    const QString head = tr("Sources (~%1 tokens):").arg(locale.toString(tokens));
    int x = line.left();
    const auto place = [&](Action action, const QString& label, const QString& payload) {
        const int cw = fm.horizontalAdvance(label) + 12;
        out.push_back({action, QRect(x, line.top() + 2, cw, line.height() - 4), label, payload});
        x += cw + 4;
    };
    place(Action::Marker, head, {});
    const int more = fm.horizontalAdvance(QStringLiteral("+999")) + 16;
    for (size_t i = 0; i < sources.size(); ++i) {
        const QString name = fm.elidedText(QString::fromStdString(sources[i].name), Qt::ElideMiddle, 160);
        const QString label = sources[i].passage > 0 ? tr("%1 ¶%2").arg(name).arg(sources[i].passage) : name;
        const bool last = i + 1 == sources.size();
        if (x + fm.horizontalAdvance(label) + 12 + (last ? 0 : more) > line.right()) {
            place(Action::Source, QStringLiteral("+%1").arg(sources.size() - i), QString::number(i));
            return;
        }
        place(Action::Source, label, QString::number(i));
    }
}

void MessageDelegate::paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const {
    if (!option.rect.isValid()) return;  // a row not placed yet (a batched layout is running)
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
    const int textWidth = textWidthFor(option, index);
    QTextDocument* doc = document(index, textWidth);
    // Draw only what is visible: a long streamed reply is mostly outside the viewport (the
    // painter's clip is the system clip, which hasClipping() does not report).
    const auto* view = qobject_cast<const QAbstractScrollArea*>(option.widget);
    const QRect visible = view ? option.rect & view->viewport()->rect() : option.rect;
    if (QTextDocument* reasoning = reasoningDocument(index, textWidth - kReasoningIndent)) {
        QAbstractTextDocumentLayout::PaintContext muted;  // set apart from the answer: muted, with a rule on its left
        muted.palette = pal;
        muted.palette.setColor(QPalette::Text, pal.color(QPalette::PlaceholderText));
        muted.clip = QRectF(visible).translated(-l.reasoningTopLeft);
        p->setPen(QPen(pal.color(QPalette::Mid), 2));
        const int ruleX = l.reasoningTopLeft.x() - kReasoningIndent / 2;
        p->drawLine(ruleX, l.reasoningTopLeft.y(), ruleX,
                    l.reasoningTopLeft.y() + static_cast<int>(reasoning->size().height()));
        p->translate(l.reasoningTopLeft);
        reasoning->documentLayout()->draw(p, muted);
        p->translate(-l.reasoningTopLeft);
    }
    p->translate(l.textTopLeft);
    QAbstractTextDocumentLayout::PaintContext ctx;
    ctx.palette = pal;
    ctx.clip = p->hasClipping() ? p->clipBoundingRect() : QRectF(visible).translated(-l.textTopLeft);
    doc->documentLayout()->draw(p, ctx);
    p->translate(-l.textTopLeft);
    for (const Hit& h : visibleHits(option, index, ctx.clip.top() - option.fontMetrics.height(), ctx.clip.bottom())) {
        const bool hover = (option.state & QStyle::State_MouseOver) != 0;
        if (h.action == Action::Marker) {  // a word, not a button: italic, no box
            QFont italic = p->font();
            italic.setItalic(true);
            p->save();
            p->setFont(italic);
            p->setPen(pal.color(QPalette::PlaceholderText));
            p->drawText(h.rect, Qt::AlignCenter, h.label);
            p->restore();
            continue;
        }
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
            if (!h.rect.contains(pos) || h.action == Action::Marker) continue;
            if (h.action == Action::CopyCode) QApplication::clipboard()->setText(h.payload);
            if (h.action == Action::CopyMessage)
                QApplication::clipboard()->setText(answerOf(index));  // not the reasoning
            if (h.action == Action::ToggleReasoning)
                model->setData(index, !index.data(MessageListModel::ReasoningExpandedRole).toBool(),
                               MessageListModel::ReasoningExpandedRole);
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
    if (isUser(index)) browser->setPlainText(answerOf(index));
    else browser->setMarkdown(answerOf(index));
    styleCodeBlocks(browser->document());
}

void MessageDelegate::updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option,
                                           const QModelIndex& index) const {
    const Layout l = layout(option, index);  // over the answer, below any reasoning
    editor->setGeometry(QRect(l.textTopLeft, l.bubble.bottomRight()).adjusted(-2, -2, -kPad + 2, -kPad + 2));
}

}  // namespace hearth
