// Paints one message of the message view: Markdown rendered by QTextDocument (headings,
// lists, tables, code blocks in a monospace font with a Copy chip), user messages as bubbles
// on the right, notices framed, and a footer of actions (copy, edit, regenerate, < 2/3 >).
// Rendered documents are cached by (message, version, width), so scrolling does not re-parse.
#pragma once

#include <QCache>
#include <QHash>
#include <QStyledItemDelegate>
#include <QTextDocument>
#include <memory>

namespace hearth {

class MessageDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    enum class Action { CopyMessage, CopyCode, Edit, Regenerate, PreviousBranch, NextBranch };
    struct Hit {
        Action action;
        QRect rect;      // in the view's viewport coordinates
        QString label;
        QString payload;  // the code, for CopyCode
    };

    explicit MessageDelegate(QObject* parent = nullptr);

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    bool editorEvent(QEvent* event, QAbstractItemModel* model, const QStyleOptionViewItem& option,
                     const QModelIndex& index) override;
    // A read-only text browser over the message, for selecting part of it (double-click).
    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    void setModelData(QWidget*, QAbstractItemModel*, const QModelIndex&) const override {}

    // The clickable chips of the row at option.rect (tests click them).
    std::vector<Hit> hits(const QStyleOptionViewItem& option, const QModelIndex& index) const;

signals:
    void actionTriggered(hearth::MessageDelegate::Action action, const QModelIndex& index, const QString& payload);

private:
    struct Layout {
        QRect bubble;  // the message's box
        QPoint textTopLeft;
        QRect footer;
    };
    QString cacheKey(const QModelIndex& index, int textWidth) const;
    QTextDocument* document(const QModelIndex& index, int textWidth) const;
    Layout layout(const QStyleOptionViewItem& option, const QModelIndex& index) const;
    int textWidthFor(const QStyleOptionViewItem& option, const QModelIndex& index) const;

    // The reply being streamed: one document updated in place. Text up to the last paragraph
    // break outside a code block is parsed once; only the tail after it is parsed again.
    struct Stream {
        qint64 id = -1;
        int width = 0, version = -1;
        int committedChars = 0, committedPos = 0;
        QString committedText;
        std::unique_ptr<QTextDocument> doc;
    };
    QTextDocument* streamingDocument(const QModelIndex& index, int textWidth) const;

    mutable Stream stream_;
    mutable QCache<QString, QTextDocument> documents_;
    mutable QHash<QString, QSize> sizes_;
};

}  // namespace hearth
