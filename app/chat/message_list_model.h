// The message view's rows: the active branch of one conversation (with each message's place
// among its sibling branches), plus notices that are not stored (errors with a way forward).
// A reply of a thinking model is split into its reasoning and its answer (the row's text, as
// stored, keeps both). Changed only on the GUI thread; streamed text is appended to the last row.
#pragma once

#include <QAbstractListModel>
#include <QSet>
#include <QString>
#include <optional>
#include <vector>

#include "engine/tokenizer/chat_role.h"
#include "engine/tokenizer/reasoning.h"

namespace hearth {

struct MessageRow {
    qint64 id = 0;  // store id; 0 for a notice
    std::optional<ChatRole> role;  // nullopt: a notice (an error with a way forward), not a message
    QString text;
    bool streaming = false;
    int siblingIndex = 0;  // 0-based place among the branches at this point
    int siblingCount = 1;
    int version = 0;  // bumped on each text change (the delegate's cache key)
    QString action = {};  // a notice's way forward, offered as a button: "save-copy" or empty
    QString details = {};  // a notice's technical text (English), behind its "Details…"; empty: none
    QString topic = {};  // a notice's subject ("load": a model failed to load), so it can go when no longer true
    // How a finished reply ended when it did not end by itself: "stopped" (Stop), "interrupted"
    // (cut short, e.g. by a crash); empty otherwise and while streaming.
    QString ending = {};
    // Set by the model, unique among all rows it has held: changes when the answer is replaced,
    // not when it is extended (appendText), so a view may parse only what was appended.
    quint64 textEpoch = 0;
    // Set by the model from text: an assistant row's reasoning span and the answer after it
    // (splitReasoning); for other rows, and replies without a span, answer is the whole text.
    QString reasoning = {}, answer = {};
    bool reasoningOpen = false;  // the span is not closed: still reasoning, or cut off while it was
    // An assistant row: the documents its turn carried (the user message's sources JSON,
    // app/docs/passages.h), cited under the reply; "" when none.
    QString sources = {};
    QString model = {};  // an assistant row: the model that wrote it (Message::model); "" unknown

    bool isNotice() const { return !role.has_value(); }
};

class MessageListModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Roles {
        IdRole = Qt::UserRole + 1,
        RoleRole,  // the message's ChatRole; an invalid QVariant for a notice
        StreamingRole,
        SiblingIndexRole,
        SiblingCountRole,
        VersionRole,
        IsLastAssistantRole,
        TextEpochRole,
        NoticeActionRole,
        NoticeDetailsRole,  // MessageRow::details
        AnswerRole,  // what the view renders and Copy copies (Qt::DisplayRole is the whole text)
        ReasoningRole,  // the reasoning, without its markers ("" when none)
        ReasoningOpenRole,  // bool: the reasoning has not ended
        ReasoningExpandedRole,  // bool, settable: the reasoning is shown, not only its header
        EndingRole,  // MessageRow::ending
        SourcesRole,  // MessageRow::sources
        // An assistant row's model, when the rows' replies come from more than one model (the
        // label that tells them apart); "" otherwise.
        ModelLabelRole,
    };
    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;  // editable: opens a selectable view
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;  // ReasoningExpandedRole only

    // The loaded model's reasoning span (its chat format's); nullopt: "<think>" ... "</think>" at
    // the start of a reply, which is how models without a span of their own would write one.
    void setReasoningSpan(std::optional<ReasoningSpan> span);

    void setRows(std::vector<MessageRow> rows);
    void append(MessageRow row);
    void appendText(qint64 id, const QString& text);  // to the row with that id
    void setStreaming(qint64 id, bool streaming);
    void removeNotices();
    void removeNotices(const QString& topic);  // only those about topic
    void setEnding(qint64 id, const QString& ending);
    bool hasReply() const;  // an assistant row is shown (something to regenerate)
    const MessageRow* row(int i) const;
    int rowOfId(qint64 id) const;

private:
    void split(MessageRow& r) const;

    std::vector<MessageRow> rows_;
    quint64 nextEpoch_ = 1;
    ReasoningSpan span_;
    QSet<qint64> expanded_;  // ids of the rows whose reasoning is shown
    bool severalModels_ = false;  // the replies shown name more than one model
};

}  // namespace hearth
