// The message view's rows: the active branch of one conversation (with each message's place
// among its sibling branches), plus notices that are not stored (errors with a way forward).
// Changed only on the GUI thread; streamed text is appended to the last row.
#pragma once

#include <QAbstractListModel>
#include <QString>
#include <vector>

namespace hearth {

struct MessageRow {
    qint64 id = 0;          // store id; 0 for a notice
    QString role;           // "user", "assistant", "system", or "error" for a notice
    QString text;
    bool streaming = false;
    int siblingIndex = 0;   // 0-based place among the branches at this point
    int siblingCount = 1;
    int version = 0;        // bumped on each text change (the delegate's cache key)
    QString action = {};    // a notice's way forward, offered as a button: "save-copy" or empty
    // Set by the model, unique among all rows it has held: changes when the text is replaced,
    // not when it is extended (appendText), so a view may parse only what was appended.
    quint64 textEpoch = 0;
};

class MessageListModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Roles {
        IdRole = Qt::UserRole + 1, RoleRole, StreamingRole, SiblingIndexRole, SiblingCountRole,
        VersionRole, IsLastAssistantRole, TextEpochRole, NoticeActionRole,
    };
    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;  // editable: opens a selectable view

    void setRows(std::vector<MessageRow> rows);
    void append(MessageRow row);
    void appendText(qint64 id, const QString& text);  // to the row with that id
    void setStreaming(qint64 id, bool streaming);
    void removeNotices();
    const MessageRow* row(int i) const;
    int rowOfId(qint64 id) const;

private:
    std::vector<MessageRow> rows_;
    quint64 nextEpoch_ = 1;
};

}  // namespace hearth
