// Code blocks are found by the block property Qt's Markdown reader sets (BlockCodeLanguage);
// their frames are painted behind the text, so the document's block formats only make room:
// margins for the header and the inset, never a background (which would not round its corners).
#include "ui/code_blocks.h"

#include <QAbstractTextDocumentLayout>
#include <QFontDatabase>
#include <QPainter>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextList>

#include "app/common/code_highlighter.h"

namespace hearth {

namespace {

constexpr int kCodePad = 10, kCodeGap = 6;

bool isCodeBlock(const QTextBlock& b) {
    return b.isValid() && b.blockFormat().hasProperty(QTextFormat::BlockCodeLanguage);
}

CodeRun runFrom(const QTextBlock& first) {
    CodeRun r{first, first};
    while (isCodeBlock(r.last.next())) r.last = r.last.next();
    return r;
}

// The tokens of the run's text as colours (comments also italic); the run's text positions map
// one to one onto the document's (a block break is one position, as the '\n' is one character).
void highlightRun(QTextDocument* doc, const CodeRun& run, const SyntaxColors& colors) {
    const QString text = run.text();
    QTextCursor c(doc);
    for (const CodeToken& t : highlightCode(text, run.language())) {
        QTextCharFormat f;
        switch (t.kind) {
        case CodeTokenKind::Keyword: f.setForeground(colors.keyword); break;
        case CodeTokenKind::String: f.setForeground(colors.string); break;
        case CodeTokenKind::Number: f.setForeground(colors.number); break;
        case CodeTokenKind::Comment:
            f.setForeground(colors.comment);
            f.setFontItalic(true);
            break;
        }
        c.setPosition(run.first.position() + t.start);
        c.setPosition(run.first.position() + t.start + t.length, QTextCursor::KeepAnchor);
        c.mergeCharFormat(f);
    }
}

// Markdown paragraphs (not list items, not table cells) get half a line of space below, which
// Qt's Markdown reader does not give them: a reply reads as paragraphs, not as a wall of lines.
void spaceParagraph(const QTextBlock& b, int spacing) {
    if (b.textList() || b.blockFormat().bottomMargin() >= spacing || QTextCursor(b).currentTable()) return;
    QTextBlockFormat f;
    f.setBottomMargin(spacing);
    QTextCursor(b).mergeBlockFormat(f);
}

}  // namespace

int codeHeaderHeight(const QFontMetrics& fm) { return fm.height() + 12; }

QString CodeRun::text() const {
    QString out = first.text();
    for (QTextBlock b = first; b != last;) b = b.next(), out += QLatin1Char('\n') + b.text();
    return out;
}

QString CodeRun::language() const { return first.blockFormat().property(QTextFormat::BlockCodeLanguage).toString(); }

// Code blocks (fenced or indented; Qt's Markdown reader marks both with BlockCodeLanguage) get a
// monospace font, an inset, room above the first for the header (language, Copy) and syntax
// colours; the frame behind them is painted by paintCodeFrames(). From a block on: a streamed
// reply's tail.
// markdown: the document is a reply's Markdown (a user's plain text has a block per line).
void styleBlocks(QTextDocument* doc, const SyntaxColors& colors, bool markdown, QTextBlock from) {
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const QFontMetrics fm(doc->defaultFont());
    const int header = codeHeaderHeight(fm);
    for (QTextBlock b = from.isValid() ? from : doc->begin(); b.isValid(); b = b.next()) {
        if (!isCodeBlock(b)) {
            if (markdown && b.next().isValid()) spaceParagraph(b, fm.height() / 2);  // not below the last
            continue;
        }
        const CodeRun run = runFrom(b);
        QTextCursor c(run.first);
        c.setPosition(run.last.position() + run.last.length() - 1, QTextCursor::KeepAnchor);
        QTextBlockFormat inset;
        inset.setLeftMargin(kCodePad);
        inset.setRightMargin(kCodePad);
        inset.setTopMargin(0);
        inset.setBottomMargin(0);
        c.mergeBlockFormat(inset);
        QTextCharFormat cf;
        cf.setFont(mono);
        cf.setFontFixedPitch(true);
        c.mergeCharFormat(cf);
        QTextBlockFormat edge;
        // A streamed tail's run may go on from the block above it: no header then.
        edge.setTopMargin(isCodeBlock(run.first.previous()) ? 0 : kCodeGap + header);
        QTextCursor(run.first).mergeBlockFormat(edge);
        QTextBlockFormat bottom;
        bottom.setBottomMargin(kCodePad + kCodeGap);
        QTextCursor(run.last).mergeBlockFormat(bottom);
        highlightRun(doc, run, colors);
        b = run.last;
    }
}

// The code runs that reach into [docTop, docBottom] (document coordinates), with those begun
// above it: painting a long streamed reply looks only at its visible blocks.
std::vector<CodeRun> codeRuns(QTextDocument* doc, qreal docTop, qreal docBottom) {
    std::vector<CodeRun> out;
    QTextBlock b = doc->begin();
    if (docTop > 0) b = doc->findBlock(doc->documentLayout()->hitTest(QPointF(0, docTop), Qt::FuzzyHit));
    while (isCodeBlock(b) && isCodeBlock(b.previous())) b = b.previous();
    for (; b.isValid(); b = b.next()) {
        if (b.layout()->position().y() > docBottom) break;
        if (!isCodeBlock(b)) continue;
        out.push_back(runFrom(b));
        b = out.back().last;
    }
    return out;
}

// The run's frame in document coordinates: its header (the first block's top margin, less the
// gap above the frame), its lines and the bottom inset, across the text's width.
QRectF codeFrame(const CodeRun& run, qreal textWidth) {
    const qreal margin = run.first.blockFormat().topMargin();
    const qreal top = run.first.layout()->position().y() - margin + (margin > 0 ? kCodeGap : 0);
    const QTextLayout* last = run.last.layout();
    const qreal bottom = last->position().y() + last->boundingRect().height() + kCodePad;
    return QRectF(0, top, textWidth, bottom - top);
}

qreal codeFrameOverhang(QTextDocument* doc) {
    const QTextBlock last = doc->lastBlock();
    if (!isCodeBlock(last)) return 0;
    const qreal bottom = last.layout()->position().y() + last.layout()->boundingRect().height() + kCodePad;
    return std::max<qreal>(0, bottom + kCodeGap - doc->size().height());
}

// Each run's frame and its header's language label (document coordinates; "code" when unnamed).
void paintCodeFrames(QPainter* p, const QFontMetrics& fm, const std::vector<CodeRun>& runs, int textWidth,
                     const MessageColors& colors, const QString& unnamed) {
    const int header = codeHeaderHeight(fm);
    for (const CodeRun& run : runs) {
        const QRectF frame = codeFrame(run, textWidth);
        p->setPen(Qt::NoPen);
        p->setBrush(colors.codeBackground);
        p->drawRoundedRect(frame, 8, 8);
        const QString language = run.language().section(QLatin1Char(' '), 0, 0);
        p->setPen(colors.codeLabel);
        p->drawText(QRectF(frame.left() + kCodePad, frame.top(), frame.width() / 2, header),
                    Qt::AlignLeft | Qt::AlignVCenter, language.isEmpty() ? unnamed : language);
    }
}

}  // namespace hearth
