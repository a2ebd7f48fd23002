// Rows are replaced wholesale on refresh: lists are short (hundreds) and a reset keeps the
// view consistent with the store's order.
#include "app/chat/conversation_list_model.h"

#include <QDateTime>
#include <QLocale>
#include <algorithm>

namespace hearth {

ConversationListModel::ConversationListModel(ConversationStore& store, QObject* parent)
    : QAbstractListModel(parent), store_(&store) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const auto i = static_cast<size_t>(index.row());
    const Conversation& c = rows_[i];
    const Match match = i < matches_.size() ? matches_[i] : Match{};
    const QString where = match.otherBranch ? tr("in another branch") : QString();
    switch (role) {
    case Qt::DisplayRole: return c.title.empty() ? tr("New chat") : QString::fromStdString(c.title);
    case Qt::EditRole: return QString::fromStdString(c.title);  // "" for an untitled chat
    case Qt::ToolTipRole: {
        const QString when = QLocale().toString(QDateTime::fromMSecsSinceEpoch(c.updatedMs), QLocale::ShortFormat);
        return match.snippet.isEmpty()
            ? when
            : QStringLiteral("%1\n%2%3").arg(when, where.isEmpty() ? QString() : where + ": ", match.snippet);
    }
    case IdRole: return QVariant::fromValue<qint64>(c.id);
    case UpdatedRole: return QVariant::fromValue<qint64>(c.updatedMs);
    case SnippetRole: return match.snippet;
    case MatchStartRole: return match.start;
    case MatchLengthRole: return match.length;
    case MatchMessageRole: return QVariant::fromValue<qint64>(match.messageId);
    case WhereRole: return where;
    default: return {};
    }
}

namespace {

// Whitespace runs (newlines too) as one space.
QString oneLine(const QString& text) {
    QString out;
    out.reserve(text.size());
    for (const QChar ch : text)
        if (!ch.isSpace()) out += ch;
        else if (out.isEmpty() || out.back() != QLatin1Char(' ')) out += QLatin1Char(' ');
    return out;
}

}  // namespace

ConversationListModel::Match ConversationListModel::snippetAround(const QString& message, const QString& text) {
    constexpr qsizetype kBefore = 40, kAfter = 60, kSlack = 12;  // characters
    const qsizetype at = message.indexOf(text, 0, Qt::CaseInsensitive);
    if (at < 0 || text.isEmpty()) return Match{.snippet = oneLine(message.left(kBefore + kAfter)).trimmed()};
    qsizetype from = std::max<qsizetype>(0, at - kBefore);
    if (from > 0)  // start after a space when one is near, not inside a word
        if (const qsizetype space = message.indexOf(QLatin1Char(' '), from);
            space >= 0 && space < std::min(at, from + kSlack))
            from = space + 1;
    if (message.at(from).isLowSurrogate()) ++from;  // never half a character
    const qsizetype end = at + text.size();
    qsizetype to = std::min(message.size(), end + kAfter);
    if (to < message.size())
        if (const qsizetype space = message.lastIndexOf(QLatin1Char(' '), to); space > std::max(end, to - kSlack))
            to = space;
    if (to < message.size() && message.at(to).isLowSurrogate()) ++to;
    QString before = oneLine(message.mid(from, at - from));
    if (before.startsWith(QLatin1Char(' '))) before.remove(0, 1);
    if (from > 0) before.prepend(QChar(0x2026));
    QString found = message.mid(at, text.size());
    for (QChar& ch : found)
        if (ch.isSpace()) ch = QLatin1Char(' ');
    QString after = oneLine(message.mid(end, to - end));
    if (after.endsWith(QLatin1Char(' '))) after.chop(1);
    if (to < message.size()) after.append(QChar(0x2026));
    return Match{.snippet = before + found + after,
                 .start = static_cast<int>(before.size()),
                 .length = static_cast<int>(found.size())};
}

Result<void> ConversationListModel::refresh() {
    const QString text = filter_.trimmed();
    Result<void> result;
    std::vector<Conversation> rows;
    std::vector<Match> matches;
    if (text.isEmpty()) {
        auto list = store_->listConversations();
        if (list) rows = std::move(*list);
        else result = std::unexpected(list.error());
    } else if (auto hits = store_->searchMessages(text.toStdString()); hits) {
        for (SearchHit& hit : *hits) {
            Match m = hit.messageId == 0 ? Match{} : snippetAround(QString::fromStdString(hit.messageText), text);
            m.messageId = hit.messageId;
            m.otherBranch = hit.messageId != 0 && !hit.inActiveBranch;
            matches.push_back(std::move(m));
            rows.push_back(std::move(hit.conversation));
        }
    } else {
        result = std::unexpected(hits.error());
    }
    beginResetModel();
    rows_ = std::move(rows);
    matches_ = std::move(matches);
    endResetModel();
    return result;
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
