// Rows are replaced wholesale on refresh: lists are short (hundreds) and a reset keeps the
// view consistent with the store's order.
#include "app/chat/conversation_list_model.h"

#include <QDateTime>
#include <QLocale>

namespace hearth {

ConversationListModel::ConversationListModel(ConversationStore& store, QObject* parent)
    : QAbstractListModel(parent), store_(&store) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const Conversation& c = rows_[static_cast<size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole: return c.title.empty() ? tr("New chat") : QString::fromStdString(c.title);
    case Qt::EditRole: return QString::fromStdString(c.title);  // "" for an untitled chat
    case Qt::ToolTipRole: return QLocale().toString(QDateTime::fromMSecsSinceEpoch(c.updatedMs), QLocale::ShortFormat);
    case IdRole: return QVariant::fromValue<qint64>(c.id);
    case UpdatedRole: return QVariant::fromValue<qint64>(c.updatedMs);
    default: return {};
    }
}

Result<void> ConversationListModel::refresh() {
    auto list = filter_.trimmed().isEmpty() ? store_->listConversations()
                                            : store_->searchConversations(filter_.trimmed().toStdString());
    beginResetModel();
    if (list) rows_ = std::move(*list);
    else rows_.clear();
    endResetModel();
    if (!list) return std::unexpected(list.error());
    return {};
}

Result<void> ConversationListModel::setStore(ConversationStore& store) {
    store_ = &store;
    return refresh();
}

void ConversationListModel::setFilter(const QString& text) {
    filter_ = text;
    (void)refresh();
}

int ConversationListModel::rowOf(int64_t conversationId) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == conversationId) return static_cast<int>(i);
    return -1;
}

int64_t ConversationListModel::idAt(int row) const {
    return row >= 0 && row < rowCount() ? rows_[static_cast<size_t>(row)].id : 0;
}

}  // namespace hearth
