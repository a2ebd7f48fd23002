// hearth-cli conversations --db PATH: list (or --search TEXT), --show ID, --delete ID,
// --export ID --format md|json, --move-aside (a damaged database is renamed, kept).
#include <QDateTime>
#include <QJsonDocument>
#include <cstdio>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_store.h"
#include "app/store/kv_block_store.h"
#include "app/chat/stored_turn.h"
#include "engine/str_cat.h"

namespace hearth::cli {
namespace {

QList<QCommandLineOption> conversationsOptions() {
    QList<QCommandLineOption> o = storeOptions();
    o << QCommandLineOption("show", "Print a conversation's active branch.", "id")
      << QCommandLineOption("delete", "Delete a conversation (its messages and KV).", "id")
      << QCommandLineOption("export", "Export a conversation's active branch.", "id")
      << QCommandLineOption("format", "--export format: md or json.", "format", "md")
      << QCommandLineOption("search", "List conversations whose title or messages contain TEXT.", "text")
      << QCommandLineOption("move-aside", "Rename a damaged database to PATH.damaged-TIME and stop.");
    return o;
}

QString isoTime(int64_t ms) { return QDateTime::fromMSecsSinceEpoch(ms).toUTC().toString(Qt::ISODate); }

QJsonObject conversationJson(const Conversation& c, const std::vector<Message>& branch) {
    QJsonArray messages;
    for (const Message& m : branch) {
        QJsonObject o{{"id", static_cast<qint64>(m.id)},
                      {"parent_id", static_cast<qint64>(m.parentId)},
                      {"role", QString::fromLatin1(chatRoleName(m.role))},
                      {"text", QString::fromStdString(m.text)},
                      {"complete", m.complete},
                      {"created", isoTime(m.createdMs)}};
        if (m.role == ChatRole::Assistant) {
            o.insert("generated_tokens", m.stats.generatedTokens);
            o.insert("finish_reason", QString::fromStdString(m.stats.finishReason));
        }
        messages.append(o);
    }
    return {{"id", static_cast<qint64>(c.id)},
            {"title", QString::fromStdString(c.title)},
            {"handle", QString::fromStdString(c.handle)},
            {"model", QString::fromStdString(c.model)},
            {"system_prompt", QString::fromStdString(c.systemPrompt)},
            {"settings", QJsonDocument::fromJson(QByteArray::fromStdString(c.settingsJson)).object()},
            {"created", isoTime(c.createdMs)},
            {"updated", isoTime(c.updatedMs)},
            {"messages", messages}};
}

std::string markdown(const Conversation& c, const std::vector<Message>& branch) {
    std::string md = strCat("# ", c.title, "\n\n");
    if (!c.systemPrompt.empty()) md += strCat("**System:** ", c.systemPrompt, "\n\n");
    for (const Message& m : branch) {
        const char* who = m.role == ChatRole::User ? "User" : m.role == ChatRole::Assistant ? "Assistant" : "System";
        md += strCat("## ", who, m.complete ? "" : " (incomplete)", "\n\n", m.text, "\n\n");
    }
    return md;
}

int listConversations(ConversationStore& store, const QCommandLineParser& p) {
    auto list =
        p.isSet("search") ? store.searchConversations(p.value("search").toStdString()) : store.listConversations();
    if (!list) return failWith(list.error());
    QJsonArray all;
    for (const Conversation& c : *list) {
        auto branch = store.activeBranch(c.id);
        if (!branch) return failWith(branch.error());
        if (p.isSet("json")) {
            all.append(QJsonObject{{"id", static_cast<qint64>(c.id)},
                                   {"title", QString::fromStdString(c.title)},
                                   {"updated", isoTime(c.updatedMs)},
                                   {"messages", static_cast<int>(branch->size())}});
            continue;
        }
        writeOut(
            strCat(c.id, "\t", isoTime(c.updatedMs).toStdString(), "\t", branch->size(), " messages\t", c.title, "\n"));
    }
    if (p.isSet("json")) writeOut(QJsonDocument(all).toJson(QJsonDocument::Compact).toStdString() + "\n");
    return 0;
}

int showOrExport(ConversationStore& store, const QString& name, const QString& format) {
    auto c = findConversation(store, name.toStdString(), false);
    if (!c) return failWith(c.error());
    auto branch = store.activeBranch(c->id);
    if (!branch) return failWith(branch.error());
    if (format == "json") {
        writeOut(QJsonDocument(conversationJson(*c, *branch)).toJson(QJsonDocument::Indented).toStdString());
        return 0;
    }
    if (format != "md") return usageError("--format must be md or json");
    writeOut(markdown(*c, *branch));
    return 0;
}

int cmdConversations(const QCommandLineParser& p) {
    if (!p.isSet("db")) return usageError("conversations needs --db");
    if (p.isSet("move-aside")) {
        auto moved = ConversationStore::moveAside(p.value("db").toStdString());
        if (!moved) return failWith(moved.error());
        writeOut(strCat("moved ", p.value("db").toStdString(), " to ", *moved, "\n"));
        return 0;
    }
    auto store = openStoreOrReport(p);
    if (!store) return 1;
    if (p.isSet("show")) return showOrExport(*store, p.value("show"), "md");
    if (p.isSet("export")) return showOrExport(*store, p.value("export"), p.value("format"));
    if (p.isSet("delete")) {
        auto c = findConversation(*store, p.value("delete").toStdString(), false);
        if (!c) return failWith(c.error());
        if (auto r = store->deleteConversation(c->id); !r) return failWith(r.error());
        if (auto r = store->kv().enforceBudget(); !r) return failWith(r.error());
        writeOut(strCat("deleted conversation ", c->id, "\n"));
        return 0;
    }
    return listConversations(*store, p);
}

}  // namespace

Command conversationsCommand() {
    return {"conversations",
            "  conversations --db PATH [--search TEXT] [--json] | --show ID | --delete ID\n"
            "           | --export ID [--format md|json] | --move-aside (rename a damaged database)\n",
            conversationsOptions, cmdConversations};
}

}  // namespace hearth::cli
