// Conversation export and import for the window (conversation_transfer.h). The worker opens its
// own ConversationStore on the same file: SQLite connections are per thread (the store's
// contract), WAL lets the window go on reading while the worker writes, and the busy timeout
// lets a reply being saved and the import take turns. Files are written with QSaveFile, so an
// export that fails leaves no half-written file in place of an older one.
#include "app/chat/conversation_transfer.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>
#include <QSaveFile>
#include <QThreadPool>
#include <memory>

#include "app/chat/conversation_controller.h"
#include "app/common/error_text.h"
#include "app/store/conversation_export.h"
#include "app/store/conversation_store.h"
#include "app/store/kv_block_store.h"

namespace hearth {

namespace {

using Problem = TransferOutcome::Problem;

void failed(TransferOutcome& out, Problem problem, const QString& detail) {
    out.problem = problem;
    out.detail = detail;
}

bool writeFile(TransferOutcome& out, const std::string& text) {
    QSaveFile file(out.path);
    const QByteArray bytes = QByteArray::fromStdString(text);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
        failed(out, Problem::WriteFile, file.errorString());
        return false;
    }
    return true;
}

// The store's result, or the outcome's Database problem.
template <class T>
bool stored(TransferOutcome& out, const Result<T>& r) {
    if (!r)
        failed(out, r.error().code == ErrorCode::InvalidFormat ? Problem::NotConversations : Problem::Database,
               describe(r.error()));
    return r.has_value();
}

void runExport(ConversationStore& store, TransferOutcome& out, qint64 id, ExportFormat format) {
    const Result<std::string> text = out.kind == TransferKind::ExportAll ? exportAllConversationsJson(store)
        : format == ExportFormat::Markdown                               ? exportConversationMarkdown(store, id)
                                                                         : exportConversationJson(store, id);
    if (!stored(out, text)) {
        if (out.problem == Problem::NotConversations) out.problem = Problem::Database;
        return;
    }
    if (!writeFile(out, *text)) return;
    if (out.kind == TransferKind::ExportConversation) {
        out.conversations = {id};
    } else if (auto all = store.listConversations(); stored(out, all)) {
        for (const Conversation& c : *all) out.conversations.append(c.id);
    }
}

void runImport(ConversationStore& store, TransferOutcome& out) {
    QFile file(out.path);
    if (!file.open(QIODevice::ReadOnly)) return failed(out, Problem::ReadFile, file.errorString());
    const QByteArray bytes = file.readAll();
    if (file.error() != QFile::NoError) return failed(out, Problem::ReadFile, file.errorString());
    const auto ids = importConversationsJson(store, bytes.toStdString());
    if (!stored(out, ids)) return;
    for (int64_t id : *ids) {
        out.conversations.append(id);
        if (auto messages = store.messages(id)) out.nMessages += static_cast<qint64>(messages->size());
    }
}

}  // namespace

ExportFormat exportFormatForPath(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    return suffix == QLatin1String("md") || suffix == QLatin1String("markdown") ? ExportFormat::Markdown
                                                                                : ExportFormat::Json;
}

ConversationTransfer::ConversationTransfer(ConversationController& conversations, QObject* parent)
    : QObject(parent), conversations_(conversations) {}

bool ConversationTransfer::exportConversation(qint64 id, const QString& path, ExportFormat format) {
    return start(TransferKind::ExportConversation, path,
                 [id, format](ConversationStore& store, TransferOutcome& out) { runExport(store, out, id, format); });
}

bool ConversationTransfer::exportAll(const QString& path) {
    return start(TransferKind::ExportAll, path,
                 [](ConversationStore& store, TransferOutcome& out) { runExport(store, out, 0, ExportFormat::Json); });
}

bool ConversationTransfer::importFile(const QString& path) {
    return start(TransferKind::Import, path,
                 [](ConversationStore& store, TransferOutcome& out) { runImport(store, out); });
}

// A database whose file was moved or deleted while open cannot be opened again by path (that
// would make a new, empty one there): the controller's notice says so and offers a copy.
template <class Work>
bool ConversationTransfer::start(TransferKind kind, const QString& path, Work work) {
    if (busy_) return false;
    TransferOutcome out;
    out.kind = kind;
    out.path = path;
    const std::string database = conversations_.databasePath().toStdString();
    if (!QFileInfo::exists(conversations_.databasePath())) {
        const Result<void> gone = fail(ErrorCode::Io, database + " is missing");
        conversations_.ok(gone);
        failed(out, Problem::Database, describe(gone.error()));
        emit finished(out);
        return true;
    }
    busy_ = true;
    emit busyChanged(true);
    const int64_t budget = conversations_.store().kv().diskBudgetBytes();
    QThreadPool::globalInstance()->start([self = QPointer<ConversationTransfer>(this), out, database, budget, work] {
        TransferOutcome result = out;
        QElapsedTimer timer;
        timer.start();
        auto store = ConversationStore::open(database, budget);
        if (store) work(**store, result);
        else failed(result, Problem::Database, describe(store.error()));
        result.workMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        // Delivered on the GUI thread, where the guard tells whether the transfer still exists.
        QMetaObject::invokeMethod(QCoreApplication::instance(), [self, result] {
            if (self) self->take(result);
        });
    });
    return true;
}

// The first imported conversation is opened, unless a reply is being written: opening another
// conversation would stop it, and the user did not ask to leave it.
void ConversationTransfer::take(const TransferOutcome& outcome) {
    busy_ = false;
    if (outcome.kind == TransferKind::Import && !outcome.conversations.isEmpty()) {
        conversations_.ok(conversations_.list()->refresh());
        if (!conversations_.replying()) conversations_.openConversation(outcome.conversations.front());
    }
    emit busyChanged(false);
    emit finished(outcome);
}

}  // namespace hearth
