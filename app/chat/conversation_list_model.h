// The sidebar's list: conversations, the most recent message first, optionally filtered by a
// search over titles and message text; a search result carries a line of the message around
// the match and says when that message is in a branch not shown. A snapshot of the store,
// refreshed on the GUI thread.
#pragma once

#include <QAbstractListModel>
#include <vector>

#include "app/store/conversation_store.h"

namespace hearth {

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
public:
    // Qt::DisplayRole: the title, or "New chat" (translated) for an untitled one; Qt::EditRole:
    // the stored title.
    enum Roles {
        IdRole = Qt::UserRole + 1,
        UpdatedRole,
        SnippetRole,  // QString: one line of the matched message around the match; "" when none
        MatchStartRole,  // int: where the match starts in the snippet (QChar units)
        MatchLengthRole,  // int: its length; 0 when only the title matched
        MatchMessageRole,  // qint64: the matched message; 0 when none
        WhereRole  // QString: "in another branch" when the match is not in the branch shown, else ""
    };
    // Where a search found a conversation (empty while not searching).
    struct Match {
        QString snippet = {};
        int start = 0;
        int length = 0;
        qint64 messageId = 0;
        bool otherBranch = false;
    };

    explicit ConversationListModel(ConversationStore& store, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;

    // Reloads from the store with the current filter; returns the store's error, if any.
    Result<void> refresh();
    // Lists another store from now on (the window switched to a copy of the database); refreshes.
    Result<void> setStore(ConversationStore& store);
    void setFilter(const QString& text);  // "" shows all; refreshes
    QString filter() const { return filter_; }
    int rowOf(int64_t conversationId) const;  // -1 when not listed
    int64_t idAt(int row) const;

    // A line of message around the first place it holds text (any case): about 40 characters
    // before and 60 after, cut at spaces near there, whitespace runs shown as one space.
    static Match snippetAround(const QString& message, const QString& text);

private:
    ConversationStore* store_;
    std::vector<Conversation> rows_;
    std::vector<Match> matches_;  // parallel to rows_ while searching
    QString filter_;
};

}  // namespace hearth
