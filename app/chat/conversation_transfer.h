// Conversations in and out of the window, without widgets: export one conversation (Hearth JSON
// with every branch and its settings, or Markdown of the active branch), export all (JSON), and
// import a file - Hearth's JSON, ChatGPT's or Claude's export, told apart by its content
// (conversation_export.h). The file is checked whole before anything is written; an import that
// fails adds nothing. The work runs on the thread pool over its own connection to the database
// (a large ChatGPT export is tens of thousands of messages); the outcome comes back on the GUI
// thread, where an import refreshes the list and opens the first conversation it added (unless a
// reply is being written, which opening another conversation would stop). Imported
// conversations are like any other: searchable, and their KV is computed on first use.
// One transfer at a time. GUI thread only; the conversation controller must outlive it.
#pragma once

#include <QList>
#include <QMetaType>
#include <QObject>
#include <QString>

namespace hearth {

class ConversationController;

enum class TransferKind { ExportConversation, ExportAll, Import };
enum class ExportFormat { Json, Markdown };

struct TransferOutcome {
    enum class Problem {
        None,
        ReadFile,  // the file to import cannot be read
        NotConversations,  // it is not an export Hearth reads, or it is malformed (detail says where)
        Database,  // the store failed (reading for an export, writing for an import)
        WriteFile,  // the export cannot be written
    };
    TransferKind kind = TransferKind::Import;
    QString path;  // the file read or written
    Problem problem = Problem::None;
    QString detail;  // the technical reason when problem != None (English, for "Show details")
    QList<qint64> conversations;  // the ones imported (new ids) or exported
    qint64 nMessages = 0;  // imported: their messages, every branch
    double workMs = 0;  // time on the worker thread (reading, checking, writing)
};

class ConversationTransfer : public QObject {
    Q_OBJECT
public:
    explicit ConversationTransfer(ConversationController& conversations, QObject* parent = nullptr);

    bool busy() const { return busy_; }
    // Each starts the transfer and returns true, or returns false when one is already running.
    // finished() follows, also on failure.
    bool exportConversation(qint64 id, const QString& path, ExportFormat format);
    bool exportAll(const QString& path);
    bool importFile(const QString& path);

signals:
    void busyChanged(bool busy);
    void finished(const hearth::TransferOutcome& outcome);

private:
    template <class Work>
    bool start(TransferKind kind, const QString& path, Work work);
    void take(const TransferOutcome& outcome);

    ConversationController& conversations_;
    bool busy_ = false;
};

// ".md" or ".markdown" (any case): Markdown; otherwise JSON.
ExportFormat exportFormatForPath(const QString& path);

}  // namespace hearth

Q_DECLARE_METATYPE(hearth::TransferOutcome)
