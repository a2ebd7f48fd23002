// Paints one message of the message view: Markdown rendered by QTextDocument (headings,
// lists, tables, code blocks in a monospace font, highlighted, framed under a header with the
// language and a Copy chip), user messages as tinted bubbles on the right, replies as cards on
// the left, both within a column of readable width, notices framed (with their way forward,
// e.g. "Save a copy…"), and a footer of actions (copy, edit, regenerate, the ‹ 2/3 › branch
// switcher drawn as one control); colours from ui/appearance.h. Under a reply whose turn carried documents, a line
// citing them (file name and passage, each clickable: actionTriggered(Source, index, "i")). A thinking model's reasoning is folded under a
// "Thinking…" header above the answer (click to show it); Copy copies the answer only.
// Rendered documents are cached by (text epoch, version, width), so scrolling does not re-parse.
#pragma once

#include <QCache>
#include <QHash>
#include <QHashFunctions>
#include <QStyledItemDelegate>
#include <QTextDocument>
#include <memory>

#include "ui/appearance.h"

namespace hearth {

class MessageDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    enum class Action {
        CopyMessage,
        CopyCode,
        Edit,
        Regenerate,
        PreviousBranch,
        NextBranch,
        SaveCopy,
        Details,  // a notice's technical text (NoticeDetailsRole)
        ToggleReasoning,
        Source,  // a document the reply's turn carried; payload: its index in the row's sources
        Marker,  // not a button: how a reply ended ("stopped", "interrupted"), drawn among the chips
        BranchPosition  // not a button: the "2/3" between the branch switcher's arrows
    };
    struct Hit {
        Action action;
        QRect rect;  // in the view's viewport coordinates
        QString label;
        QString payload;  // the code, for CopyCode
        bool enabled = true;  // false: drawn dimmed and not clickable (the first branch's ‹)
    };

    explicit MessageDelegate(QObject* parent = nullptr);

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    bool editorEvent(QEvent* event, QAbstractItemModel* model, const QStyleOptionViewItem& option,
                     const QModelIndex& index) override;
    // A read-only text browser over the message, for selecting part of it (double-click).
    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option,
                              const QModelIndex& index) const override;
    void setModelData(QWidget*, QAbstractItemModel*, const QModelIndex&) const override {}

    // The rendered text of the row (its document's plain text; tests compare streamed and whole):
    // the answer, without the reasoning.
    QString renderedText(const QStyleOptionViewItem& option, const QModelIndex& index) const;
    // The reasoning as shown when expanded; empty while it is folded or the row has none.
    QString renderedReasoning(const QStyleOptionViewItem& option, const QModelIndex& index) const;
    // Whether sizeHint() has the row's size without laying out its text (a streamed row: always).
    bool isMeasured(const QStyleOptionViewItem& option, const QModelIndex& index) const;
    // The clickable chips of the row at option.rect (tests click them).
    std::vector<Hit> hits(const QStyleOptionViewItem& option, const QModelIndex& index) const;

signals:
    void actionTriggered(hearth::MessageDelegate::Action action, const QModelIndex& index, const QString& payload);

private:
    struct Layout {
        QRect bubble;  // the message's box
        QRect reasoningHeader;  // the header that folds the reasoning; empty when the row has none
        QPoint reasoningTopLeft;  // where the expanded reasoning is drawn
        QPoint textTopLeft;  // the answer
        QRect footer;
        QRect sources;  // a reply's line of cited documents, under the footer; empty when none
    };
    // A rendered document: the row's text (epoch, version) at a text width.
    struct DocKey {
        quint64 epoch = 0;
        int version = 0, width = 0;
        bool operator==(const DocKey&) const = default;
        friend size_t qHash(const DocKey& k, size_t seed = 0) noexcept {
            return qHashMulti(seed, k.epoch, k.version, k.width);
        }
    };
    DocKey docKey(const QModelIndex& index, int textWidth) const;
    QTextDocument* document(const QModelIndex& index, int textWidth) const;
    // The reasoning as plain text when the row's reasoning is expanded, else null.
    QTextDocument* reasoningDocument(const QModelIndex& index, int textWidth) const;
    Layout layout(const QStyleOptionViewItem& option, const QModelIndex& index) const;
    int textWidthFor(const QStyleOptionViewItem& option, const QModelIndex& index) const;
    // hits() for painting: code blocks are looked for only between docTop and docBottom.
    std::vector<Hit> visibleHits(const QStyleOptionViewItem& option, const QModelIndex& index, qreal docTop,
                                 qreal docBottom) const;
    // The footer's chips (appended to out).
    void footerHits(const QStyleOptionViewItem& option, const QModelIndex& index, const Layout& l,
                    std::vector<Hit>& out) const;
    void paintChip(QPainter* p, const Hit& h, bool hovered, const MessageColors& colors) const;
    // The chips of a reply's cited documents on line (appended to out).
    void sourceHits(const QStyleOptionViewItem& option, const QModelIndex& index, const QRect& line,
                    std::vector<Hit>& out) const;

    // The reply being streamed: one document updated in place. Its text only grows within an
    // epoch; text up to the last paragraph break outside a code block is parsed once, and only
    // the tail after it is parsed again, so an update costs the tail, not the whole reply.
    struct Stream {
        quint64 epoch = 0;
        int version = -1;
        int committedChars = 0, committedPos = 0;  // text [0, chars) is doc [0, pos), final
        std::unique_ptr<QTextDocument> doc;
    };
    QTextDocument* streamingDocument(const QModelIndex& index, int textWidth) const;

    // Syntax colours are baked into the documents: a palette that turns light or dark drops them.
    void syncPalette(const QPalette& palette) const;
    mutable bool darkDocuments_ = false;
    mutable SyntaxColors syntax_;

    mutable Stream stream_;
    mutable QCache<DocKey, QTextDocument> documents_;
    mutable QCache<DocKey, QTextDocument> reasoningDocuments_;
    mutable QHash<DocKey, QSize> sizes_;  // rows not streaming; laying out 1,000 rows parses nothing
};

}  // namespace hearth
