// Streaming touches only the last rows, so rowOfId searches from the end. A streamed reply is
// split again after each batch (a scan of its text): the answer then grows as the text does.
#include "app/chat/message_list_model.h"

namespace hearth {

namespace {

QString fromView(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

void MessageListModel::split(MessageRow& r) const {
    r.reasoning.clear();
    r.reasoningOpen = false;
    r.answer = r.text;
    if (r.role != ChatRole::Assistant) return;
    const QByteArray utf8 = r.text.toUtf8();
    const ReasoningSplit s =
        splitReasoning(std::string_view(utf8.constData(), static_cast<size_t>(utf8.size())), span_);
    // A finished reply that never closed the span its prompt opened was most likely written by
    // another model earlier in the conversation: shown whole, rather than hidden as reasoning.
    if (s.open && span_.promptOpens && !r.streaming) return;
    r.reasoning = fromView(s.reasoning);
    r.answer = fromView(s.answer);
    r.reasoningOpen = s.open;
}

void MessageListModel::setReasoningSpan(std::optional<ReasoningSpan> span) {
    span_ = span.value_or(ReasoningSpan{});
    for (MessageRow& r : rows_) {
        split(r);
        r.textEpoch = nextEpoch_++;
    }
    if (!rows_.empty()) emit dataChanged(index(0), index(rowCount() - 1));
}

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
    case RoleRole: return r->role ? QVariant::fromValue(*r->role) : QVariant();
    case StreamingRole: return r->streaming;
    case SiblingIndexRole: return r->siblingIndex;
    case SiblingCountRole: return r->siblingCount;
    case VersionRole: return r->version;
    case TextEpochRole: return QVariant::fromValue<quint64>(r->textEpoch);
    case NoticeActionRole: return r->action;
    case NoticeDetailsRole: return r->details;
    case AnswerRole: return r->answer;
    case ReasoningRole: return r->reasoning;
    case ReasoningOpenRole: return r->reasoningOpen;
    case ReasoningExpandedRole: return expanded_.contains(r->id);
    case EndingRole: return r->ending;
    case SourcesRole: return r->sources;
    case ModelLabelRole: return severalModels_ && r->role == ChatRole::Assistant ? r->model : QString();
    case IsLastAssistantRole: {
        for (int i = rowCount() - 1; i >= 0; --i)
            if (rows_[static_cast<size_t>(i)].role == ChatRole::Assistant) return i == index.row();
        return false;
    }
    default: return {};
    }
}

Qt::ItemFlags MessageListModel::flags(const QModelIndex& index) const {
    return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable : Qt::NoItemFlags;
}

bool MessageListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != ReasoningExpandedRole || !row(index.row())) return false;
    MessageRow& r = rows_[static_cast<size_t>(index.row())];
    if (value.toBool()) expanded_.insert(r.id);
    else expanded_.remove(r.id);
    r.version++;  // the row's height changes
    emit dataChanged(index, index);
    return true;
}

void MessageListModel::setRows(std::vector<MessageRow> rows) {
    beginResetModel();
    rows_ = std::move(rows);
    QSet<QString> models;
    for (MessageRow& r : rows_) {
        r.textEpoch = nextEpoch_++;
        split(r);
        if (r.role == ChatRole::Assistant && !r.model.isEmpty()) models.insert(r.model);
    }
    severalModels_ = models.size() > 1;
    endResetModel();
}

void MessageListModel::append(MessageRow row) {
    const int n = rowCount();
    beginInsertRows({}, n, n);
    row.textEpoch = nextEpoch_++;
    split(row);
    rows_.push_back(std::move(row));
    endInsertRows();
    if (n > 0) emit dataChanged(index(0), index(n - 1), {IsLastAssistantRole});
}

void MessageListModel::appendText(qint64 id, const QString& text) {
    const int i = rowOfId(id);
    if (i < 0 || text.isEmpty()) return;
    MessageRow& r = rows_[static_cast<size_t>(i)];
    const QString answer = r.answer;
    r.text += text;
    r.version++;
    split(r);
    if (!r.answer.startsWith(answer)) r.textEpoch = nextEpoch_++;  // not an extension: parse it afresh
    emit dataChanged(index(i), index(i));
}

void MessageListModel::setStreaming(qint64 id, bool streaming) {
    const int i = rowOfId(id);
    if (i < 0) return;
    MessageRow& r = rows_[static_cast<size_t>(i)];
    const QString answer = r.answer;
    r.streaming = streaming;
    r.version++;
    split(r);
    if (r.answer != answer) r.textEpoch = nextEpoch_++;
    emit dataChanged(index(i), index(i));
}

void MessageListModel::removeNotices() {
    for (int i = rowCount() - 1; i >= 0; --i) {
        if (!rows_[static_cast<size_t>(i)].isNotice()) continue;
        beginRemoveRows({}, i, i);
        rows_.erase(rows_.begin() + i);
        endRemoveRows();
    }
}

void MessageListModel::removeNotices(const QString& topic) {
    for (int i = rowCount() - 1; i >= 0; --i) {
        const MessageRow& r = rows_[static_cast<size_t>(i)];
        if (!r.isNotice() || r.topic != topic) continue;
        beginRemoveRows({}, i, i);
        rows_.erase(rows_.begin() + i);
        endRemoveRows();
    }
}

void MessageListModel::setEnding(qint64 id, const QString& ending) {
    const int i = rowOfId(id);
    if (i < 0) return;
    MessageRow& r = rows_[static_cast<size_t>(i)];
    r.ending = ending;
    r.version++;  // the footer changes
    emit dataChanged(index(i), index(i));
}

bool MessageListModel::hasReply() const {
    return std::any_of(rows_.begin(), rows_.end(), [](const MessageRow& r) { return r.role == ChatRole::Assistant; });
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
