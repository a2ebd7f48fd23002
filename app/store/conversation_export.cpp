// Hearth's conversation JSON and Markdown (conversation_export.h), with Qt's JSON classes as the
// rest of app/store uses for its statistics.
#include "app/store/conversation_export.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <map>

#include "app/store/attachment_store.h"
#include "app/store/foreign_conversations.h"
#include "app/store/store_rows.h"
#include "engine/str_cat.h"

namespace hearth {

namespace {

constexpr const char* kOne = "hearth.conversation";
constexpr const char* kMany = "hearth.conversations";
constexpr int kVersion = 1;

QString q(const std::string& s) { return QString::fromStdString(s); }

Result<QJsonObject> conversationObject(const ConversationStore& store, int64_t id) {
    auto c = store.conversation(id);
    if (!c) return std::unexpected(c.error());
    if (!*c) return fail(ErrorCode::InvalidArgument, strCat("no conversation ", id));
    auto all = store.messages(id);
    if (!all) return std::unexpected(all.error());
    QJsonArray messages;
    for (const Message& m : *all) {
        QJsonObject o{{"id", static_cast<qint64>(m.id)}, {"parent", static_cast<qint64>(m.parentId)},
                      {"role", QString::fromLatin1(chatRoleName(m.role))}, {"text", q(m.text)},
                      {"complete", m.complete},          {"created_ms", static_cast<qint64>(m.createdMs)}};
        if (m.role == ChatRole::Assistant)
            o.insert("stats", QJsonDocument::fromJson(QByteArray::fromStdString(statsToJson(m.stats))).object());
        if (!m.documentsJson.empty())
            o.insert("documents", QJsonDocument::fromJson(QByteArray::fromStdString(m.documentsJson)).array());
        messages.append(o);
    }
    auto attached = store.attachments().list(id);
    if (!attached) return std::unexpected(attached.error());
    QJsonArray attachments;
    for (const Attachment& a : *attached) {
        auto body = store.attachments().text(a.id);
        if (!body) return std::unexpected(body.error());
        attachments.append(QJsonObject{{"name", q(a.name)},
                                       {"kind", q(a.kind)},
                                       {"created_ms", static_cast<qint64>(a.createdMs)},
                                       {"text", q(*body)}});
    }
    const Conversation& conv = **c;
    return QJsonObject{{"format", kOne},
                       {"version", kVersion},
                       {"title", q(conv.title)},
                       {"handle", q(conv.handle)},
                       {"model", q(conv.model)},
                       {"system_prompt", q(conv.systemPrompt)},
                       {"settings", QJsonDocument::fromJson(QByteArray::fromStdString(conv.settingsJson)).object()},
                       {"created_ms", static_cast<qint64>(conv.createdMs)},
                       {"updated_ms", static_cast<qint64>(conv.updatedMs)},
                       {"active_leaf", static_cast<qint64>(conv.activeLeafId)},
                       {"messages", messages},
                       {"attachments", attachments}};
}

std::string text(const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Indented).toStdString(); }

std::unexpected<Error> bad(const std::string& where, const std::string& problem) {
    return fail(ErrorCode::InvalidFormat, strCat("conversation file: ", where, " ", problem));
}

Result<ImportedConversation> readConversation(const QJsonObject& o, const std::string& where) {
    if (o.value("format").toString() != kOne) return bad(where, strCat("is not a \"", kOne, "\" object"));
    if (o.value("version").toInt() != kVersion)
        return bad(where, strCat("has version ", o.value("version").toInt(), "; this Hearth reads version ", kVersion));
    ImportedConversation in;
    in.conversation.title = o.value("title").toString().toStdString();
    in.conversation.handle = o.value("handle").toString().toStdString();
    in.conversation.model = o.value("model").toString().toStdString();
    in.conversation.systemPrompt = o.value("system_prompt").toString().toStdString();
    in.conversation.settingsJson =
        QJsonDocument(o.value("settings").toObject()).toJson(QJsonDocument::Compact).toStdString();
    in.conversation.activeLeafId = o.value("active_leaf").toInteger();
    std::map<int64_t, bool> seen;
    const QJsonArray messages = o.value("messages").toArray();
    for (qsizetype i = 0; i < messages.size(); ++i) {
        const QJsonObject m = messages[i].toObject();
        const std::string at = strCat(where, " message ", i + 1);
        ImportedMessage msg;
        msg.id = m.value("id").toInteger();
        msg.parent = m.value("parent").toInteger();
        const QString role = m.value("role").toString();
        const auto parsed = parseChatRole(role.toStdString());
        if (!parsed) return bad(at, strCat("has role \"", role.toStdString(), "\" (user, assistant or system)"));
        msg.role = *parsed;
        if (!m.value("text").isString()) return bad(at, "has no text");
        if (msg.id <= 0 || seen.count(msg.id)) return bad(at, "has a missing or repeated id");
        if (msg.parent != 0 && !seen.count(msg.parent)) return bad(at, "has a parent that does not come before it");
        msg.text = m.value("text").toString().toStdString();
        msg.complete = m.value("complete").toBool(true);
        msg.createdMs = m.value("created_ms").toInteger();
        if (m.contains("stats"))
            msg.stats = statsFromJson(QJsonDocument(m.value("stats").toObject()).toJson().toStdString());
        if (m.contains("documents")) {
            if (!m.value("documents").isArray()) return bad(at, "has documents that are not a list");
            const QJsonArray documents = m.value("documents").toArray();
            if (!documents.isEmpty())
                msg.documentsJson = QJsonDocument(documents).toJson(QJsonDocument::Compact).toStdString();
        }
        seen[msg.id] = true;
        in.messages.push_back(std::move(msg));
    }
    if (in.conversation.activeLeafId != 0 && !seen.count(in.conversation.activeLeafId))
        return bad(where, "names an active message that it does not hold");
    const QJsonArray attachments = o.value("attachments").toArray();
    for (qsizetype i = 0; i < attachments.size(); ++i) {
        const QJsonObject a = attachments[i].toObject();
        const std::string at = strCat(where, " attachment ", i + 1);
        if (!a.value("name").isString() || !a.value("text").isString() || a.value("text").toString().isEmpty())
            return bad(at, "has no name or no text");
        in.attachments.push_back({.name = a.value("name").toString().toStdString(),
                                  .kind = a.value("kind").toString(QStringLiteral("text")).toStdString(),
                                  .text = a.value("text").toString().toStdString(),
                                  .createdMs = a.value("created_ms").toInteger()});
    }
    return in;
}

Result<int64_t> write(ConversationStore& store, const ImportedConversation& in) {
    std::string handle = in.conversation.handle;
    if (!handle.empty()) {
        auto taken = store.conversationByHandle(handle);
        if (!taken) return std::unexpected(taken.error());
        if (*taken) handle.clear();
    }
    auto c = store.createConversation(in.conversation.title, in.conversation.systemPrompt, handle);
    if (!c) return std::unexpected(c.error());
    const auto written = [&]() -> Result<void> {
        if (auto r = store.setSettings(c->id, in.conversation.settingsJson); !r) return r;
        if (!in.conversation.model.empty())
            if (auto r = store.setModel(c->id, in.conversation.model); !r) return r;
        std::map<int64_t, int64_t> oldToNew;
        for (const ImportedMessage& m : in.messages) {
            auto added = store.appendMessage(c->id, m.parent ? oldToNew.at(m.parent) : 0, m.role, m.text, m.complete,
                                             m.createdMs);
            if (!added) return std::unexpected(added.error());
            oldToNew[m.id] = added->id;
            if (!m.documentsJson.empty())
                if (auto r = store.attachments().setTurnSources(added->id, m.documentsJson); !r) return r;
            if (m.role == ChatRole::Assistant)
                if (auto r = store.updateMessage(added->id, m.text, m.complete, &m.stats); !r) return r;
        }
        for (const ImportedAttachment& a : in.attachments)
            if (auto r = store.attachments().add(c->id, a.name, a.kind, a.text, a.createdMs); !r)
                return std::unexpected(r.error());
        if (in.conversation.activeLeafId != 0) return store.switchBranch(oldToNew.at(in.conversation.activeLeafId));
        return {};
    }();
    if (!written) {
        (void)store.deleteConversation(c->id);  // nothing half-imported stays
        return std::unexpected(written.error());
    }
    return c->id;
}

}  // namespace

Result<std::string> exportConversationJson(const ConversationStore& store, int64_t conversationId) {
    auto o = conversationObject(store, conversationId);
    if (!o) return std::unexpected(o.error());
    return text(*o);
}

Result<std::string> exportAllConversationsJson(const ConversationStore& store) {
    auto list = store.listConversations();
    if (!list) return std::unexpected(list.error());
    QJsonArray all;
    for (const Conversation& c : *list) {
        auto o = conversationObject(store, c.id);
        if (!o) return std::unexpected(o.error());
        all.append(*o);
    }
    return text(QJsonObject{{"format", kMany}, {"version", kVersion}, {"conversations", all}});
}

Result<std::string> exportConversationMarkdown(const ConversationStore& store, int64_t conversationId) {
    auto c = store.conversation(conversationId);
    if (!c) return std::unexpected(c.error());
    if (!*c) return fail(ErrorCode::InvalidArgument, strCat("no conversation ", conversationId));
    auto branch = store.activeBranch(conversationId);
    if (!branch) return std::unexpected(branch.error());
    std::string md = strCat("# ", (*c)->title, "\n\n");
    if (!(*c)->systemPrompt.empty()) md += strCat("**System:** ", (*c)->systemPrompt, "\n\n");
    for (const Message& m : *branch) {
        const char* who = m.role == ChatRole::User ? "User"
            : m.role == ChatRole::Assistant        ? "Assistant"
                                                      : "System";
        md += strCat("## ", who, m.complete ? "" : " (incomplete)", "\n\n", m.text, "\n\n");
    }
    return md;
}

Result<std::vector<int64_t>> importConversationsJson(ConversationStore& store, const std::string& json) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json), &error);
    if (!doc.isObject() && !doc.isArray())
        return bad("text", strCat("is not JSON (", error.errorString().toStdString(), " at byte ", error.offset, ")"));
    std::vector<ImportedConversation> all;
    const auto take = [&](Result<std::vector<ImportedConversation>> read) -> Result<void> {
        if (!read) return std::unexpected(read.error());
        for (ImportedConversation& c : *read) all.push_back(std::move(c));
        return {};
    };
    // Other apps' exports: an array of conversations (or one), told apart by their keys.
    const QJsonArray array = doc.isArray() ? doc.array() : QJsonArray{doc.object()};
    const QJsonObject first = array.isEmpty() ? QJsonObject() : array.first().toObject();
    const QJsonObject root = doc.object();
    Result<void> read;
    if (first.contains("mapping") && first.contains("current_node")) read = take(readChatGptExport(array));
    else if (first.contains("chat_messages")) read = take(readClaudeExport(array));
    else if (doc.isArray())
        return bad("file", "is not a Hearth, ChatGPT or Claude export (an array of unknown objects)");
    else if (root.value("format").toString() == kMany) {
        if (root.value("version").toInt() != kVersion)
            return bad("file",
                       strCat("has version ", root.value("version").toInt(), "; this Hearth reads version ", kVersion));
        const QJsonArray list = root.value("conversations").toArray();
        for (qsizetype i = 0; i < list.size() && read; ++i) {
            auto one = readConversation(list[i].toObject(), strCat("conversation ", i + 1));
            if (!one) return std::unexpected(one.error());
            all.push_back(std::move(*one));
        }
    } else {
        auto one = readConversation(root, "conversation");
        if (!one) return std::unexpected(one.error());
        all.push_back(std::move(*one));
    }
    if (!read) return std::unexpected(read.error());
    std::vector<int64_t> ids;
    for (const ImportedConversation& in : all) {
        auto id = write(store, in);
        if (!id) {
            for (int64_t done : ids) (void)store.deleteConversation(done);  // all of the file or none of it
            return std::unexpected(id.error());
        }
        ids.push_back(*id);
    }
    return ids;
}

}  // namespace hearth
