// The sidebar's list: conversations, most recently updated first, optionally filtered by a
// search over titles and message text. A snapshot of the store, refreshed on the GUI thread.
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
    enum Roles { IdRole = Qt::UserRole + 1, UpdatedRole };
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

private:
    ConversationStore* store_;
    std::vector<Conversation> rows_;
    QString filter_;
};

}  // namespace hearth
