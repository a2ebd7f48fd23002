// Documents in the window: the composer's paperclip (a file dialog), files dropped on the chat
// or the composer, the composer's line of attached documents, and the dialog a cited source
// under a reply opens (every source of that turn, the clicked one shown). Owns the window's
// AttachmentController. GUI thread only.
#pragma once

#include <QObject>
#include <QPointer>
#include <QStringList>
#include <functional>

class QDialog;
class QWidget;

namespace hearth {

class AttachmentController;
class Composer;
class ConversationController;
class MessageView;
class ModelController;

class DocumentsUi : public QObject {
    Q_OBJECT
public:
    // models: the loaded model's context sets the budget the composer states.
    DocumentsUi(ConversationController& conversations, const ModelController& models, Composer* composer,
                MessageView* view, QWidget* window);

    AttachmentController& attachments() { return *attachments_; }
    // What the paperclip asks for: a file dialog, or what tests inject (empty: cancelled).
    void setFileChooser(std::function<QStringList()> chooser) { chooseFiles_ = std::move(chooser); }
    QDialog* sourcesDialog() const { return dialog_; }  // the one open, if any
    // Opens the sources of a reply's turn (MessageListModel::SourcesRole's JSON) at source `at`.
    void showSources(const QString& sourcesJson, int at);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void attachChosen();
    void fillRemoveMenu();

    AttachmentController* attachments_;
    Composer* composer_;
    QWidget* window_;
    QPointer<QDialog> dialog_;
    std::function<QStringList()> chooseFiles_;
};

}  // namespace hearth
