// Readers of ChatGPT's and Claude's conversation exports (foreign_conversations.h). Nodes that
// hold no text a person wrote or read - ChatGPT's root node without a message, hidden system
// nodes with no text, tool calls and their results - are left out, and their children hang
// from the nearest kept ancestor, so the tree of what was said keeps its branches.
#include "app/store/foreign_conversations.h"

#include <QDateTime>
#include <QJsonObject>
#include <QStringList>
#include <functional>
#include <map>

#include "engine/str_cat.h"

namespace hearth {

namespace {

std::unexpected<Error> bad(const std::string& where, const std::string& problem) {
    return fail(ErrorCode::InvalidFormat, strCat("conversation file: ", where, " ", problem));
}

// ChatGPT's message text: the string parts of its content, one after another.
QString chatGptText(const QJsonObject& message) {
    QStringList parts;
    for (const QJsonValue& part : message.value("content").toObject().value("parts").toArray())
        if (part.isString()) parts << part.toString();
    return parts.join("\n");
}

Result<ImportedConversation> readChatGpt(const QJsonObject& c, const std::string& where) {
    ImportedConversation in;
    in.conversation.title = c.value("title").toString().toStdString();
    const QJsonObject mapping = c.value("mapping").toObject();
    if (mapping.isEmpty()) return bad(where, "has no \"mapping\" of messages");
    std::map<QString, int64_t> keptId;  // node id -> its message's id here (kept nodes only)
    std::map<QString, int> visits;
    // Depth first from the roots, children in their order (the order of the branches).
    std::function<Result<void>(const QString&, int64_t)> visit = [&](const QString& nodeId,
                                                                     int64_t parent) -> Result<void> {
        if (++visits[nodeId] > 1) return bad(where, strCat("node ", nodeId.toStdString(), " is reached twice"));
        const QJsonObject node = mapping.value(nodeId).toObject();
        const QJsonObject message = node.value("message").toObject();
        const QString role = message.value("author").toObject().value("role").toString();
        const QString text = chatGptText(message);
        int64_t here = parent;
        if ((role == "user" || role == "assistant" || role == "system") && !text.isEmpty()) {
            ImportedMessage m;
            m.id = static_cast<int64_t>(in.messages.size()) + 1;
            m.parent = parent;
            m.role = role == "user"   ? ChatRole::User
                : role == "assistant" ? ChatRole::Assistant
                                      : ChatRole::System;
            m.text = text.toStdString();
            m.createdMs = static_cast<int64_t>(message.value("create_time").toDouble() * 1000);
            m.complete = message.value("status").toString("finished_successfully") == "finished_successfully";
            in.messages.push_back(std::move(m));
            here = keptId[nodeId] = in.messages.back().id;
        }
        for (const QJsonValue& child : node.value("children").toArray()) {
            if (!mapping.contains(child.toString()))
                return bad(where, strCat("node ", nodeId.toStdString(), " has a child that is not in the mapping"));
            if (auto r = visit(child.toString(), here); !r) return r;
        }
        return {};
    };
    for (auto it = mapping.begin(); it != mapping.end(); ++it) {
        const QJsonValue parent = it.value().toObject().value("parent");
        if (parent.isNull() || parent.isUndefined() || !mapping.contains(parent.toString()))
            if (auto r = visit(it.key(), 0); !r) return std::unexpected(r.error());
    }
    // The active branch ends at current_node, or at its nearest kept ancestor.
    QString node = c.value("current_node").toString();
    for (int guard = 0; !node.isEmpty() && !keptId.count(node) && guard <= mapping.size(); ++guard)
        node = mapping.value(node).toObject().value("parent").toString();
    in.conversation.activeLeafId = keptId.count(node) ? keptId[node] : 0;
    return in;
}

int64_t isoMs(const QJsonValue& v) {
    const QDateTime t = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
    return t.isValid() ? t.toMSecsSinceEpoch() : 0;
}

Result<ImportedConversation> readClaude(const QJsonObject& c, const std::string& where) {
    ImportedConversation in;
    in.conversation.title = c.value("name").toString().toStdString();
    const QJsonArray messages = c.value("chat_messages").toArray();
    for (qsizetype i = 0; i < messages.size(); ++i) {
        const QJsonObject m = messages[i].toObject();
        const QString sender = m.value("sender").toString();
        if (sender != "human" && sender != "assistant")
            return bad(strCat(where, " message ", i + 1),
                       strCat("has sender \"", sender.toStdString(), "\" (human or assistant)"));
        ImportedMessage msg;
        msg.id = static_cast<int64_t>(in.messages.size()) + 1;
        msg.parent = msg.id - 1;
        msg.role = sender == "human" ? ChatRole::User : ChatRole::Assistant;
        msg.text = m.value("text").toString().toStdString();
        msg.createdMs = isoMs(m.value("created_at"));
        in.messages.push_back(std::move(msg));
    }
    in.conversation.activeLeafId = static_cast<int64_t>(in.messages.size());
    return in;
}

template <class Read>
Result<std::vector<ImportedConversation>> readAll(const QJsonArray& conversations, const char* app, Read read) {
    std::vector<ImportedConversation> out;
    for (qsizetype i = 0; i < conversations.size(); ++i) {
        auto one = read(conversations[i].toObject(), strCat(app, " conversation ", i + 1));
        if (!one) return std::unexpected(one.error());
        out.push_back(std::move(*one));
    }
    return out;
}

}  // namespace

Result<std::vector<ImportedConversation>> readChatGptExport(const QJsonArray& conversations) {
    return readAll(conversations, "ChatGPT", readChatGpt);
}

Result<std::vector<ImportedConversation>> readClaudeExport(const QJsonArray& conversations) {
    return readAll(conversations, "Claude", readClaude);
}

}  // namespace hearth
