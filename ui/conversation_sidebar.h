// The sidebar: New chat, search (titles and message text; a result shows the text around the
// match and opens the conversation at it, in its branch), the conversations by their last
// message (click opens; context menu or F2/Delete renames and deletes, deleting after
// confirmation; the context menu also asks for export and import, and outlines its chat while
// the open chat stays selected), and buttons for the model picker and the settings panel.
#pragma once

#include <QWidget>

class QLineEdit;
class QListView;
class QPushButton;
class QTimer;

namespace hearth {

class ConversationController;
class ConversationItemDelegate;

class ConversationSidebar : public QWidget {
    Q_OBJECT
public:
    explicit ConversationSidebar(ConversationController& conversations, QWidget* parent = nullptr);

    void focusSearch();
    void selectCurrent();  // highlights the controller's open conversation
    void renameAt(int row);
    void deleteAt(int row);  // asks first

signals:
    void settingsRequested();
    void modelPickerRequested();
    void exportRequested(qint64 conversationId);
    void exportAllRequested();
    void importRequested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void showMenu(const QPoint& pos);

    ConversationController& conversations_;
    QPushButton* newChat_;
    QLineEdit* search_;
    QListView* list_;
    ConversationItemDelegate* delegate_;
    QTimer* searchDelay_;
};

}  // namespace hearth
