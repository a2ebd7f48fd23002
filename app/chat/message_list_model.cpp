// Streaming touches only the last rows, so rowOfId searches from the end.
#include "app/chat/message_list_model.h"

namespace hearth {

int MessageListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    const MessageRow* r = row(index.row());
    if (!index.isValid() || !r) return {};
    switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole: return r->text;
    case IdRole: return QVariant::fromValue<qint64>(r->id);
    case RoleRole: return r->role;
    case StreamingRole: return r->streaming;
    case SiblingIndexRole: return r->siblingIndex;
    case SiblingCountRole: return r->siblingCount;
    case VersionRole: return r->version;
    case TextEpochRole: return QVariant::fromValue<quint64>(r->textEpoch);
    case NoticeActionRole: return r->action;
    case IsLastAssistantRole: {
        for (int i = rowCount() - 1; i >= 0; --i)
            if (rows_[static_cast<size_t>(i)].role == QLatin1String("assistant")) return i == index.row();
        return false;
    }
    default: return {};
    }
}

Qt::ItemFlags MessageListModel::flags(const QModelIndex& index) const {
    return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable : Qt::NoItemFlags;
}

void MessageListModel::setRows(std::vector<MessageRow> rows) {
    beginResetModel();
    rows_ = std::move(rows);
    for (MessageRow& r : rows_) r.textEpoch = nextEpoch_++;
    endResetModel();
}

void MessageListModel::append(MessageRow row) {
    const int n = rowCount();
    beginInsertRows({}, n, n);
    row.textEpoch = nextEpoch_++;
    rows_.push_back(std::move(row));
    endInsertRows();
    if (n > 0) emit dataChanged(index(0), index(n - 1), {IsLastAssistantRole});
}

void MessageListModel::appendText(qint64 id, const QString& text) {
    const int i = rowOfId(id);
    if (i < 0 || text.isEmpty()) return;
    rows_[static_cast<size_t>(i)].text += text;
    rows_[static_cast<size_t>(i)].version++;
    emit dataChanged(index(i), index(i));
}

void MessageListModel::setStreaming(qint64 id, bool streaming) {
    const int i = rowOfId(id);
    if (i < 0) return;
    rows_[static_cast<size_t>(i)].streaming = streaming;
    rows_[static_cast<size_t>(i)].version++;
    emit dataChanged(index(i), index(i));
}

void MessageListModel::removeNotices() {
    for (int i = rowCount() - 1; i >= 0; --i) {
        if (rows_[static_cast<size_t>(i)].role != QLatin1String("error")) continue;
        beginRemoveRows({}, i, i);
        rows_.erase(rows_.begin() + i);
        endRemoveRows();
    }
}

const MessageRow* MessageListModel::row(int i) const {
    return i >= 0 && i < rowCount() ? &rows_[static_cast<size_t>(i)] : nullptr;
}

int MessageListModel::rowOfId(qint64 id) const {
    for (int i = rowCount() - 1; i >= 0; --i)
        if (rows_[static_cast<size_t>(i)].id == id) return i;
    return -1;
}

}  // namespace hearth
