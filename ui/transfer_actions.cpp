// Conversation export and import from the window (transfer_actions.h). The message box for a
// failure is opened without blocking (QDialog::open), so the window stays live behind it.
#include "ui/transfer_actions.h"

#include <QAction>
#include <QDate>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMessageBox>
#include <QRegularExpression>
#include <QStandardPaths>

#include "app/chat/conversation_controller.h"
#include "app/chat/conversation_transfer.h"

namespace hearth {

namespace {

// A file name from a conversation's title: no path separators or characters other systems
// refuse, not too long.
QString fileNameFor(const QString& title) {
    static const QRegularExpression refused(QStringLiteral(R"([/\\:*?"<>|\x00-\x1f]+)"));
    QString name = title;
    name.replace(refused, QStringLiteral(" ")).replace(QChar(0x2026), QStringLiteral(" "));
    name = name.simplified().left(60).trimmed();
    return name.isEmpty() ? QStringLiteral("conversation") : name;
}

// The path with the suffix of the chosen filter ("Markdown (*.md)" -> ".md") when it has none.
QString withSuffix(const QString& path, const QString& filter) {
    static const QRegularExpression pattern(QStringLiteral(R"(\*\.(\w+))"));
    const auto match = pattern.match(filter);
    if (!QFileInfo(path).suffix().isEmpty() || !match.hasMatch()) return path;
    return path + '.' + match.captured(1);
}

}  // namespace

TransferActions::TransferActions(ConversationController& conversations, QWidget* window)
    : QObject(window),
      conversations_(conversations),
      window_(window),
      transfer_(new ConversationTransfer(conversations, this)),
      exportConversation_(new QAction(tr("&Export conversation…"), this)),
      exportAll_(new QAction(tr("Export &all conversations…"), this)),
      import_(new QAction(tr("&Import conversations…"), this)),
      lastFolder_(QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)) {
    exportConversation_->setObjectName("exportConversationAction");
    exportAll_->setObjectName("exportAllAction");
    import_->setObjectName("importConversationsAction");
    if (lastFolder_.isEmpty() || !QFileInfo::exists(lastFolder_)) lastFolder_ = QDir::homePath();
    connect(exportConversation_, &QAction::triggered, this, [this] { exportConversation(conversations_.current()); });
    connect(exportAll_, &QAction::triggered, this, &TransferActions::exportAll);
    connect(import_, &QAction::triggered, this, &TransferActions::importConversations);
    connect(&conversations_, &ConversationController::conversationOpened, this, &TransferActions::updateEnabled);
    connect(transfer_, &ConversationTransfer::busyChanged, this, &TransferActions::updateEnabled);
    connect(transfer_, &ConversationTransfer::finished, this, &TransferActions::report);
    updateEnabled();
}

void TransferActions::updateEnabled() {
    const bool idle = !transfer_->busy();
    exportConversation_->setEnabled(idle && conversations_.current() != 0);
    exportAll_->setEnabled(idle);
    import_->setEnabled(idle);
}

TransferActions::FileChoice TransferActions::choose(Dialog dialog, const QString& caption, const QString& suggested,
                                                    const QStringList& filters) {
    FileChoice choice;
    if (chooser_) {
        choice = chooser_(dialog, suggested, filters);
    } else {
        choice.filter = filters.value(0);
        const QString joined = filters.join(QStringLiteral(";;"));
        choice.path = dialog == Dialog::Import
            ? QFileDialog::getOpenFileName(window_, caption, suggested, joined, &choice.filter)
            : QFileDialog::getSaveFileName(window_, caption, suggested, joined, &choice.filter);
    }
    if (!choice.path.isEmpty()) lastFolder_ = QFileInfo(choice.path).absolutePath();
    return choice;
}

void TransferActions::exportConversation(qint64 id) {
    if (id == 0 || transfer_->busy()) return;
    ConversationListModel* list = conversations_.list();
    const int row = list->rowOf(id);
    const QString title = row >= 0 ? list->index(row).data().toString() : QString();
    const QString markdown = tr("Markdown, the shown branch (*.md)");
    const QString json = tr("Hearth JSON, every branch and setting (*.json)");
    const FileChoice choice = choose(Dialog::ExportConversation, tr("Export conversation"),
                                     QDir(lastFolder_).filePath(fileNameFor(title) + ".md"), {markdown, json});
    if (choice.path.isEmpty()) return;
    const QString path = withSuffix(choice.path, choice.filter);
    const QString suffix = QFileInfo(path).suffix().toLower();
    // The file's own suffix decides when it names a format; else the filter chosen.
    const ExportFormat format = suffix == "json" ? ExportFormat::Json
        : suffix == "md" || suffix == "markdown" ? ExportFormat::Markdown
        : choice.filter == json                  ? ExportFormat::Json
                                                 : ExportFormat::Markdown;
    if (transfer_->exportConversation(id, path, format)) emit statusMessage(tr("Exporting the conversation…"), 0);
}

void TransferActions::exportAll() {
    if (transfer_->busy()) return;
    const QString json = tr("Hearth JSON, every branch and setting (*.json)");
    const QString suggested =
        QDir(lastFolder_)
            .filePath(tr("Hearth conversations %1").arg(QDate::currentDate().toString(Qt::ISODate)) + ".json");
    const FileChoice choice = choose(Dialog::ExportAll, tr("Export all conversations"), suggested, {json});
    if (choice.path.isEmpty()) return;
    if (transfer_->exportAll(withSuffix(choice.path, json))) emit statusMessage(tr("Exporting all conversations…"), 0);
}

void TransferActions::importConversations() {
    if (transfer_->busy()) return;
    const FileChoice choice =
        choose(Dialog::Import, tr("Import conversations"), lastFolder_,
               {tr("Conversation exports: Hearth, ChatGPT, Claude (*.json)"), tr("All files (*)")});
    if (choice.path.isEmpty()) return;
    if (transfer_->importFile(choice.path)) emit statusMessage(tr("Importing conversations…"), 0);
}

QString TransferActions::problemText(const TransferOutcome& outcome) const {
    const QString file = QDir::toNativeSeparators(outcome.path);
    using Problem = TransferOutcome::Problem;
    switch (outcome.problem) {
    case Problem::ReadFile: return tr("Could not read %1, so nothing was imported.").arg(file);
    case Problem::NotConversations:
        return tr("%1 is not a conversation export that Hearth can read, or it is damaged, so nothing was imported. "
                  "Hearth imports its own JSON exports and the conversations.json files of ChatGPT and Claude "
                  "exports.")
            .arg(file);
    case Problem::Database:
        return outcome.kind == TransferKind::Import
            ? tr("The imported conversations could not be saved, so nothing was imported. Check that the disk "
                 "has free space, then try again.")
            : tr("The conversations could not be read from the database, so nothing was exported.");
    case Problem::WriteFile:
        return tr("Could not write %1, so nothing was exported. Check that the folder exists, that you may write "
                  "to it and that the disk has free space.")
            .arg(file);
    case Problem::None: break;
    }
    return {};
}

void TransferActions::report(const TransferOutcome& outcome) {
    const QString file = QDir::toNativeSeparators(outcome.path);
    if (outcome.problem == TransferOutcome::Problem::None) {
        const int n = static_cast<int>(outcome.conversations.size());
        QString text;
        switch (outcome.kind) {
        case TransferKind::ExportConversation: text = tr("Conversation exported to %1.").arg(file); break;
        case TransferKind::ExportAll: text = tr("%n conversation(s) exported to %1.", nullptr, n).arg(file); break;
        case TransferKind::Import:
            text = tr("%n conversation(s) imported from %1 (%2 messages).", nullptr, n)
                       .arg(file, QLocale().toString(outcome.nMessages));
            break;
        }
        emit statusMessage(text, 8000);
        return;
    }
    emit statusMessage(QString(), 0);
    const QString title = outcome.kind == TransferKind::Import ? tr("Import failed") : tr("Export failed");
    auto* box = new QMessageBox(QMessageBox::Warning, title, problemText(outcome), QMessageBox::Ok, window_);
    box->setObjectName("transferError");
    box->setDetailedText(outcome.detail);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

}  // namespace hearth
