// hearth-cli generate --db PATH --conversation ID: one stored turn (the prompt as the next
// user message, the reply from the whole conversation with its KV restored), and the store
// helpers the store commands share.
#include <QJsonDocument>
#include <cstdio>

#include "app/cli/cli_store.h"
#include "app/store/kv_block_store.h"
#include "app/chat/stored_turn.h"

namespace hearth::cli {

QList<QCommandLineOption> storeOptions() {
    QList<QCommandLineOption> options;  // the core's table (generate --db is parsed there first)
    for (const core::OptionSpec& s : core::storeOptionSpecs())
        options.append(QCommandLineOption(QString::fromStdString(s.name), QString::fromStdString(s.description),
                                          QString::fromStdString(s.valueName), QString::fromStdString(s.defaultValue)));
    return options;
}

std::unique_ptr<ConversationStore> openStoreOrReport(const QCommandLineParser& p, const QString& path) {
    bool ok = false;
    const qlonglong mb = p.value("disk-budget-mb").toLongLong(&ok);
    if (!ok || mb <= 0) {
        usageError("--disk-budget-mb must be a positive number");
        return nullptr;
    }
    auto store = ConversationStore::open((path.isEmpty() ? p.value("db") : path).toStdString(), int64_t{mb} << 20);
    if (!store) {
        std::fprintf(stderr, "hearth-cli: %s\n", store.error().message.c_str());
        return nullptr;
    }
    return std::move(*store);
}

Result<std::unique_ptr<Engine>> loadEngineWithStore(const QCommandLineParser& p, ConversationStore& store) {
    auto options = readEngineOptions(p);
    if (!options) return std::unexpected(options.error());
    const std::string path = p.value("model").toStdString();
    auto fp = store.kv().modelFingerprint(path);
    if (fp) options->modelFingerprint = *fp;  // else load() reports what is wrong with the file
    return Engine::load(path, *options);
}

namespace {

QJsonObject storedJson(const StoredTurnResult& r, double loadMs, int64_t conversationId) {
    Outcome o;
    o.tokens = r.tokens;
    o.text = r.text;
    o.reason = r.reason;
    o.timings = r.timings;
    QJsonObject obj = resultJson(r.request, o, loadMs);
    QJsonObject timings = obj["timings"].toObject();
    timings.insert("kv_restored_tokens", r.kvRestoredTokens);
    timings.insert("kv_restore_ms", r.restore.ms);
    obj.insert("timings", timings);
    obj.insert("conversation_id", static_cast<qint64>(conversationId));
    obj.insert("user_message_id", static_cast<qint64>(r.userMessageId));
    obj.insert("reply_message_id", static_cast<qint64>(r.replyMessageId));
    obj.insert("kv_blocks_saved", r.kvBlocksSaved);
    if (!r.restore.refusal.empty()) obj.insert("kv_restore_refused", QString::fromStdString(r.restore.refusal));
    return obj;
}

}  // namespace

int runStoredGenerate(const QCommandLineParser& p) {
    if (!p.isSet("model") || !p.isSet("conversation"))
        return usageError("generate --db needs --model and --conversation");
    GenerateRequest req;
    QString error;
    std::string prompt;
    if (!readSampling(p, req, error) || !readPromptText(p, prompt, error)) return usageError(error);
    if (req.maxTokens < 0) return usageError("--max-tokens must be >= 0");
    auto store = openStoreOrReport(p);
    if (!store) return 1;
    const auto tLoad = Clock::now();
    auto engine = loadEngineWithStore(p, *store);
    if (!engine) return failWith(engine.error());
    const double loadMs = msSince(tLoad);
    auto conv = findConversation(*store, p.value("conversation").toStdString(), true, p.value("system").toStdString());
    if (!conv) return failWith(conv.error());
    const bool json = p.isSet("json");
    auto r = runStoredTurn(**engine, *store, conv->id, prompt, req, {!p.isSet("no-kv-restore"), thinks(p)},
                           [&](std::string_view t) {
                               if (!json) writeOut(t);
                               return true;
                           });
    if (!r) return failWith(r.error());
    if (!r->kvNote.empty()) std::fprintf(stderr, "hearth-cli: %s; recomputed\n", r->kvNote.c_str());
    if (json) {
        writeOut(QJsonDocument(storedJson(*r, loadMs, conv->id)).toJson(QJsonDocument::Compact).toStdString() + "\n");
        return 0;
    }
    writeOut("\n");
    std::fprintf(stderr,
                 "[conversation %lld; %d prompt tokens: %d restored from the database, %d cached, %d computed; first "
                 "token after %.0f ms; %s]\n",
                 static_cast<long long>(conv->id), static_cast<int>(r->request.prompt.size()), r->kvRestoredTokens,
                 r->timings.prefixCacheHitTokens, r->timings.prefillTokens, r->timings.ttftMs,
                 finishReasonName(r->reason));
    return 0;
}

}  // namespace hearth::cli
