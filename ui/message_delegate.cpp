// Geometry: each row is [gap][bubble with the document][footer chips][gap], inside a centred
// column of at most kColumnChars average characters (long lines tire the eye). Hit rectangles
// come from the same layout() that paint() uses, so clicks land where chips are drawn.
#include "ui/message_delegate.h"

#include <QAbstractScrollArea>
#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QClipboard>
#include <QCursor>
#include <QFontDatabase>
#include <QIcon>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <array>
#include <cmath>

#include "app/chat/message_list_model.h"
#include "app/docs/passages.h"
#include "ui/code_blocks.h"

namespace hearth {

namespace {

constexpr int kMargin = 16, kPad = 14, kGap = 8, kReasoningIndent = 12;
constexpr int kColumnChars = 130;  // the column's width in average characters, at most
constexpr int kChipPad = 8, kIcon = 16, kRadius = 12;

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

int footerHeight(const QStyleOptionViewItem& option) { return option.fontMetrics.height() + 14; }

// The theme's icon of a per-message button; null where the button is a word only. Looked up
// once per icon theme: a theme lookup that finds nothing searches the theme's folders again
// each time, and every painted row asks for its chips' icons.
QIcon chipIcon(MessageDelegate::Action action) {
    using A = MessageDelegate::Action;
    static std::optional<QString> theme;
    static std::array<QIcon, 5> icons;  // copy, edit, regenerate, save-copy; [4] null
    if (const QString now = QIcon::themeName() + QLatin1Char('/') + QIcon::fallbackThemeName(); now != theme) {
        theme = now;
        const char* const names[] = {"edit-copy", "document-edit", "view-refresh", "document-save-as"};
        for (size_t i = 0; i < 4; ++i) {
            const QIcon icon = themeIcon(QLatin1String(names[i]));
            icons[i] = icon.isNull() ? QIcon() : icon;
        }
    }
    switch (action) {
    case A::CopyMessage:
    case A::CopyCode: return icons[0];
    case A::Edit: return icons[1];
    case A::Regenerate: return icons[2];
    case A::SaveCopy: return icons[3];
    default: return icons[4];
    }
}

int chipWidth(const QFontMetrics& fm, const QString& label, MessageDelegate::Action action) {
    return fm.horizontalAdvance(label) + 2 * kChipPad + (chipIcon(action).isNull() ? 0 : kIcon + 4);
}

// The readable column of a row: centred, at most kColumnChars wide, inside the row's margins.
QRect columnOf(const QStyleOptionViewItem& option) {
    const QRect r = option.rect;
    const int width = std::min(r.width(), kColumnChars * option.fontMetrics.averageCharWidth() + 2 * kMargin);
    return QRect(r.left() + (r.width() - width) / 2, r.top(), width, r.height()).adjusted(kMargin, 0, -kMargin, 0);
}

}  // namespace

MessageDelegate::MessageDelegate(QObject* parent)
    : QStyledItemDelegate(parent),
      darkDocuments_(isDarkPalette(QApplication::palette())),
      syntax_(syntaxColors(QApplication::palette())) {
    documents_.setMaxCost(400);
}

void MessageDelegate::syncPalette(const QPalette& palette) const {
    if (isDarkPalette(palette) == darkDocuments_) return;
    darkDocuments_ = !darkDocuments_;
    syntax_ = syntaxColors(palette);
    documents_.clear();
    stream_ = Stream{};
}

int MessageDelegate::textWidthFor(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const int full = columnOf(option).width() - 2 * kPad;
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
    styleBlocks(s.doc.get(), syntax_, true, firstNew);
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
    styleBlocks(doc, syntax_, !isUser(index));
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
    const int w = static_cast<int>(std::ceil(size.width())) + 2 * kPad;
    const int h = static_cast<int>(std::ceil(size.height() + codeFrameOverhang(doc))) + 2 * kPad + above;
    const QRect column = columnOf(option);
    const int left = isUser(index) ? column.right() + 1 - w : column.left();
    l.bubble = QRect(left, column.top() + kGap, isUser(index) ? w : column.width(), h);
    if (!l.reasoningHeader.isEmpty()) {
        l.reasoningHeader.moveTopLeft(l.bubble.topLeft() + QPoint(kPad, kPad));
        l.reasoningTopLeft = l.reasoningHeader.bottomLeft() + QPoint(kReasoningIndent, kGap + 1);
    }
    l.textTopLeft = l.bubble.topLeft() + QPoint(kPad, kPad + above);
    l.footer = QRect(column.left(), l.bubble.bottom() + 3, column.width(), footerHeight(option));
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
    const int textWidth = textWidthFor(option, index);
    for (const CodeRun& run : codeRuns(document(index, textWidth), docTop, docBottom)) {
        const QRect frame = codeFrame(run, textWidth).toAlignedRect().translated(l.textTopLeft);
        const QString label = tr("Copy code");
        const int cw = chipWidth(fm, label, Action::CopyCode), ch = fm.height() + 6;
        const int header = codeHeaderHeight(fm);
        out.push_back({Action::CopyCode, QRect(frame.right() - 6 - cw, frame.top() + (header - ch) / 2, cw, ch), label,
                       run.text()});
    }
    if (!l.reasoningHeader.isEmpty())
        out.push_back({Action::ToggleReasoning, l.reasoningHeader, reasoningHeader(index), {}});
    if (index.data(MessageListModel::StreamingRole).toBool()) return out;
    footerHits(option, index, l, out);
    if (!l.sources.isEmpty()) sourceHits(option, index, l.sources, out);
    return out;
}

// The footer's chips: a notice's ways forward, or how a reply ended, Copy, Edit, Regenerate; the
// branch switcher first, as one control of three parts (‹, "2/3", ›). A user's are right-aligned.
void MessageDelegate::footerHits(const QStyleOptionViewItem& option, const QModelIndex& index, const Layout& l,
                                 std::vector<Hit>& out) const {
    const QFontMetrics& fm = option.fontMetrics;
    std::vector<Hit> chips;
    const int n = index.data(MessageListModel::SiblingCountRole).toInt();
    if (n > 1) {
        const int i = index.data(MessageListModel::SiblingIndexRole).toInt();
        const QString position = QStringLiteral("%1/%2").arg(i + 1).arg(n);
        const int arrow = fm.horizontalAdvance(QStringLiteral("›")) + 2 * kChipPad;
        chips.push_back({Action::PreviousBranch, QRect(0, 0, arrow, 0), QStringLiteral("‹"), {}, i > 0});
        chips.push_back({Action::BranchPosition, QRect(0, 0, fm.horizontalAdvance(position) + 4, 0), position, {}});
        chips.push_back({Action::NextBranch, QRect(0, 0, arrow, 0), QStringLiteral("›"), {}, i + 1 < n});
    }
    const auto add = [&](Action action, const QString& label) {
        chips.push_back({action, QRect(0, 0, chipWidth(fm, label, action), 0), label, {}});
    };
    if (isNotice(index)) {
        if (index.data(MessageListModel::NoticeActionRole).toString() == QLatin1String("save-copy"))
            add(Action::SaveCopy, tr("Save a copy…"));
        if (!index.data(MessageListModel::NoticeDetailsRole).toString().isEmpty()) add(Action::Details, tr("Details…"));
    } else {
        // Which model wrote the reply, when the chat's replies come from more than one.
        if (const QString model = index.data(MessageListModel::ModelLabelRole).toString(); !model.isEmpty())
            add(Action::Marker, model);
        const QString ending = index.data(MessageListModel::EndingRole).toString();
        if (ending == QLatin1String("stopped")) add(Action::Marker, tr("stopped"));
        if (ending == QLatin1String("interrupted")) add(Action::Marker, tr("interrupted"));
        add(Action::CopyMessage, tr("Copy"));
    }
    if (isUser(index)) add(Action::Edit, tr("Edit"));
    if (index.data(MessageListModel::IsLastAssistantRole).toBool()) add(Action::Regenerate, tr("Regenerate"));
    const auto grouped = [](Action a) { return a == Action::PreviousBranch || a == Action::BranchPosition; };
    int total = 0;
    for (const Hit& h : chips) total += h.rect.width() + (grouped(h.action) ? 0 : 4);
    int x = isUser(index) ? l.bubble.right() + 1 - (total - 4) : l.bubble.left();
    for (Hit& h : chips) {
        h.rect = QRect(x, l.footer.top() + 2, h.rect.width(), l.footer.height() - 4);
        x += h.rect.width() + (grouped(h.action) ? 0 : 4);
        out.push_back(std::move(h));
    }
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
    syncPalette(option.palette);
    const Layout l = layout(option, index);
    const QPalette& pal = option.palette;
    const MessageColors colors = messageColors(pal);
    p->save();
    p->setRenderHint(QPainter::Antialiasing);
    p->setPen(isNotice(index) ? QPen(colors.noticeBorder, 1) : Qt::NoPen);
    p->setBrush(isNotice(index) ? colors.noticeBubble : isUser(index) ? colors.userBubble : colors.replyBubble);
    const int textWidth = textWidthFor(option, index);
    QTextDocument* doc = document(index, textWidth);
    // Draw only what is visible: a long streamed reply is mostly outside the viewport (the
    // painter's clip is the system clip, which hasClipping() does not report). The bubble too: a
    // rounded rectangle thousands of pixels tall costs its whole outline at each frame.
    const auto* view = qobject_cast<const QAbstractScrollArea*>(option.widget);
    const QRect visible = view ? option.rect & view->viewport()->rect() : option.rect;
    const QRect bubble = l.bubble & visible.adjusted(0, -2 * kRadius, 0, 2 * kRadius);
    p->drawRoundedRect(QRectF(bubble).adjusted(0.5, 0.5, -0.5, -0.5), kRadius, kRadius);
    if (QTextDocument* reasoning = reasoningDocument(index, textWidth - kReasoningIndent)) {
        QAbstractTextDocumentLayout::PaintContext muted;  // set apart from the answer: muted, with a rule on its left
        muted.palette = pal;
        muted.palette.setColor(QPalette::Text, colors.mutedText);
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
    ctx.palette.setColor(QPalette::Text, isUser(index) ? colors.userText : colors.replyText);
    ctx.clip = p->hasClipping() ? p->clipBoundingRect() : QRectF(visible).translated(-l.textTopLeft);
    paintCodeFrames(p, option.fontMetrics, codeRuns(doc, ctx.clip.top(), ctx.clip.bottom()), textWidth, colors,
                    tr("code"));
    doc->documentLayout()->draw(p, ctx);
    p->translate(-l.textTopLeft);
    const QPoint mouse = (option.state & QStyle::State_MouseOver) && view
        ? view->viewport()->mapFromGlobal(QCursor::pos())
        : QPoint(-1, -1);
    const std::vector<Hit> hits =
        visibleHits(option, index, ctx.clip.top() - option.fontMetrics.height(), ctx.clip.bottom());
    QRect switcher;  // the branch switcher's one frame, under its three parts
    for (const Hit& h : hits)
        if (h.action == Action::PreviousBranch || h.action == Action::NextBranch) switcher |= h.rect;
    if (!switcher.isEmpty()) {
        p->setPen(Qt::NoPen);
        p->setBrush(colors.chipBackground);
        p->drawRoundedRect(QRectF(switcher), switcher.height() / 2.0, switcher.height() / 2.0);
    }
    for (const Hit& h : hits) paintChip(p, h, h.rect.contains(mouse), colors);
    p->restore();
}

// A per-message button: readable at rest (the text colour on a light fill), tinted under the
// mouse; markers and the branch position are words; a disabled arrow is dimmed.
void MessageDelegate::paintChip(QPainter* p, const Hit& h, bool hovered, const MessageColors& colors) const {
    if (h.action == Action::Marker) {  // a word, not a button: italic, no box
        QFont italic = p->font();
        italic.setItalic(true);
        p->save();
        p->setFont(italic);
        p->setPen(colors.mutedText);
        p->drawText(h.rect, Qt::AlignCenter, h.label);
        p->restore();
        return;
    }
    const bool branch =
        h.action == Action::PreviousBranch || h.action == Action::BranchPosition || h.action == Action::NextBranch;
    const qreal radius = h.rect.height() / 2.0;
    p->setPen(Qt::NoPen);
    if (!branch || (hovered && h.enabled && h.action != Action::BranchPosition)) {
        p->setBrush(hovered && h.enabled ? colors.chipHoverBackground : colors.chipBackground);
        p->drawRoundedRect(QRectF(h.rect), radius, radius);
    }
    p->setPen(h.enabled ? colors.chipText : colors.chipDisabledText);
    QRect text = h.rect;
    if (const QIcon icon = chipIcon(h.action); !icon.isNull()) {
        const QRect box(h.rect.left() + kChipPad, h.rect.center().y() - kIcon / 2 + 1, kIcon, kIcon);
        icon.paint(p, box, Qt::AlignCenter, h.enabled ? QIcon::Normal : QIcon::Disabled);
        text.setLeft(box.right() + 4);
        text.setRight(h.rect.right() - kChipPad);
    }
    p->drawText(text, Qt::AlignCenter, h.label);
}

bool MessageDelegate::editorEvent(QEvent* event, QAbstractItemModel* model, const QStyleOptionViewItem& option,
                                  const QModelIndex& index) {
    if (event->type() == QEvent::MouseButtonRelease) {
        const QPoint pos = static_cast<QMouseEvent*>(event)->position().toPoint();
        for (const Hit& h : hits(option, index)) {
            if (!h.rect.contains(pos) || h.action == Action::Marker || h.action == Action::BranchPosition || !h.enabled)
                continue;
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
    styleBlocks(browser->document(), syntax_, !isUser(index));
}

void MessageDelegate::updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option,
                                           const QModelIndex& index) const {
    const Layout l = layout(option, index);  // over the answer, below any reasoning
    editor->setGeometry(QRect(l.textTopLeft, l.bubble.bottomRight()).adjusted(-2, -2, -kPad + 2, -kPad + 2));
}

}  // namespace hearth
