// The window's conversation export and import: three actions ("Export conversation…", "Export
// all conversations…", "Import conversations…") for the Hearth menu, which the sidebar's context
// menu asks for too; the file dialogs, or what a test injects in their place; and what the user
// is told - a status line when it worked, and when not, a message box saying in plain words
// what went wrong and that nothing was changed, with the technical reason under "Show Details…".
// The work itself is ConversationTransfer's (app/chat), off the GUI thread.
#pragma once

#include <QObject>
#include <QStringList>
#include <functional>

class QAction;
class QWidget;

namespace hearth {

class ConversationController;
class ConversationTransfer;
struct TransferOutcome;

class TransferActions : public QObject {
    Q_OBJECT
public:
    enum class Dialog { ExportConversation, ExportAll, Import };
    struct FileChoice {
        QString path;  // empty: cancelled
        QString filter;  // the chosen one of the filters offered (the format of an export)
    };
    // Asks for a file: the dialog, the suggested path, the filters offered (the first is the default).
    using FileChooser = std::function<FileChoice(Dialog dialog, const QString& suggested, const QStringList& filters)>;

    // window: the parent of the dialogs and message boxes.
    TransferActions(ConversationController& conversations, QWidget* window);

    QAction* exportConversationAction() const { return exportConversation_; }
    QAction* exportAllAction() const { return exportAll_; }
    QAction* importAction() const { return import_; }
    ConversationTransfer& transfer() { return *transfer_; }
    // Replaces the file dialogs (tests); an empty function restores them.
    void setFileChooser(FileChooser chooser) { chooser_ = std::move(chooser); }

    void exportConversation(qint64 id);  // asks where (and, by the filter, Markdown or JSON)
    void exportAll();
    void importConversations();

signals:
    void statusMessage(const QString& text, int timeoutMs);

private:
    FileChoice choose(Dialog dialog, const QString& caption, const QString& suggested, const QStringList& filters);
    void updateEnabled();
    void report(const TransferOutcome& outcome);
    QString problemText(const TransferOutcome& outcome) const;

    ConversationController& conversations_;
    QWidget* window_;
    ConversationTransfer* transfer_;
    QAction* exportConversation_;
    QAction* exportAll_;
    QAction* import_;
    FileChooser chooser_;
    QString lastFolder_;  // where the last file was chosen
};

}  // namespace hearth
