// hearth-cli conversations [--db PATH] (the window's database without it): list (or --search TEXT), --show ID, --delete ID,
// --export ID --format md|json, --export-all, --import FILE (Hearth's conversation JSON:
// conversation_export.h), --move-aside (a damaged database is renamed, kept).
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <cstdio>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_store.h"
#include "app/store/conversation_export.h"
#include "app/store/kv_block_store.h"
#include "app/chat/stored_turn.h"
#include "app/common/paths.h"
#include "engine/str_cat.h"

namespace hearth::cli {
namespace {

QList<QCommandLineOption> conversationsOptions() {
    QList<QCommandLineOption> o = storeOptions();
    o << QCommandLineOption("show", "Print a conversation's active branch.", "id")
      << QCommandLineOption("delete", "Delete a conversation (its messages and KV).", "id")
      << QCommandLineOption("export", "Export a conversation (json: every branch; md: the active one).", "id")
      << QCommandLineOption("export-all", "Export every conversation as Hearth JSON.")
      << QCommandLineOption("import", "Import the conversations of a Hearth JSON file.", "file")
      << QCommandLineOption("format", "--export format: md or json.", "format", "md")
      << QCommandLineOption("search", "List conversations whose title or messages contain TEXT.", "text")
      << QCommandLineOption("move-aside", "Rename a damaged database to PATH.damaged-TIME and stop.");
    return o;
}

QString isoTime(int64_t ms) { return QDateTime::fromMSecsSinceEpoch(ms).toUTC().toString(Qt::ISODate); }

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

// --format json: Hearth's conversation JSON, every branch (conversation_export.h); md: the active branch.
int showOrExport(ConversationStore& store, const QString& name, const QString& format) {
    auto c = findConversation(store, name.toStdString(), false);
    if (!c) return failWith(c.error());
    if (format != "md" && format != "json") return usageError("--format must be md or json");
    auto text = format == "json" ? exportConversationJson(store, c->id) : exportConversationMarkdown(store, c->id);
    if (!text) return failWith(text.error());
    writeOut(*text);
    return 0;
}

int importConversations(ConversationStore& store, const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return failWith(
            Error{ErrorCode::Io, strCat("cannot read ", path.toStdString(), ": ", f.errorString().toStdString())});
    auto ids = importConversationsJson(store, f.readAll().toStdString());
    if (!ids) return failWith(ids.error());
    for (const int64_t id : *ids) writeOut(strCat("imported conversation ", id, "\n"));
    return 0;
}

int cmdConversations(const QCommandLineParser& p) {
    // Without --db, the database the window and chat use.
    const QString path = p.isSet("db") ? p.value("db") : defaultDatabasePath();
    if (p.isSet("move-aside")) {
        auto moved = ConversationStore::moveAside(path.toStdString());
        if (!moved) return failWith(moved.error());
        writeOut(strCat("moved ", path.toStdString(), " to ", *moved, "\n"));
        return 0;
    }
    QDir().mkpath(QFileInfo(path).absolutePath());
    auto store = openStoreOrReport(p, path);
    if (!store) return 1;
    if (p.isSet("show")) return showOrExport(*store, p.value("show"), "md");
    if (p.isSet("export")) return showOrExport(*store, p.value("export"), p.value("format"));
    if (p.isSet("export-all")) {
        auto all = exportAllConversationsJson(*store);
        if (!all) return failWith(all.error());
        writeOut(*all);
        return 0;
    }
    if (p.isSet("import")) return importConversations(*store, p.value("import"));
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
            "  conversations [--db PATH] [--search TEXT] [--json] | --show ID | --delete ID\n"
            "           | --export ID [--format md|json] | --export-all | --import FILE\n"
            "           | --move-aside (rename a damaged database)   (without --db: the window's database)\n",
            conversationsOptions, cmdConversations};
}

}  // namespace hearth::cli
