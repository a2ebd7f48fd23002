// Code blocks in a rendered message: their look (a monospace font, an inset, room for a header
// with the language and Copy, syntax colours from app/common/code_highlighter.h), finding them
// again for painting and copying, and their frames. Used by MessageDelegate on the GUI thread.
#pragma once

#include <QString>
#include <QTextBlock>
#include <vector>

#include "ui/appearance.h"

class QFontMetrics;
class QPainter;
class QTextDocument;

namespace hearth {

// Consecutive code blocks: one frame, one language label, one text to copy.
struct CodeRun {
    QTextBlock first, last;
    QString text() const;  // the blocks' texts joined by '\n'
    QString language() const;  // the fence's label, as written ("python", "C++", "" when none)
};

// The header's height above a run's first line (language label, Copy chip).
int codeHeaderHeight(const QFontMetrics& fm);

// Styles the code blocks from block from on (all when invalid: a streamed reply restyles its
// tail only); with markdown, also spaces paragraphs (a user's plain text has a block per line).
void styleBlocks(QTextDocument* doc, const SyntaxColors& colors, bool markdown, QTextBlock from = {});

// The runs that reach into [docTop, docBottom] (document coordinates), those begun above it too.
std::vector<CodeRun> codeRuns(QTextDocument* doc, qreal docTop = -1, qreal docBottom = 1e18);

// A run's frame (header, lines, inset) in document coordinates, across textWidth.
QRectF codeFrame(const CodeRun& run, qreal textWidth);

// How far a code block that ends the document draws its frame below the document's size (which
// leaves out the last block's bottom margin); 0 when the document does not end in code.
qreal codeFrameOverhang(QTextDocument* doc);

// The runs' frames and language labels (unnamed: the label of a fence without a language);
// the painter is translated to the document's origin.
void paintCodeFrames(QPainter* p, const QFontMetrics& fm, const std::vector<CodeRun>& runs, int textWidth,
                     const MessageColors& colors, const QString& unnamed);

}  // namespace hearth
