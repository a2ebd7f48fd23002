// The settings panel's "Servers" tab. Local server: a switch that starts or stops the window's
// OpenAI-compatible server at once (on loopback, at the port beside it) and shows its address.
// Remote server: replies on another machine's OpenAI-compatible server — its address, API key
// (kept in the system keychain; the field shows only whether one is saved), model (listed
// from the server) and timeout; applied with the panel's OK (apply()).
#pragma once

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace hearth {

class LocalServerController;
class RemoteController;

class ServersPage : public QWidget {
    Q_OBJECT
public:
    // Either controller may be null: its group is left out.
    ServersPage(LocalServerController* server, RemoteController* remote, QWidget* parent = nullptr);

    void apply();  // the remote settings (the local server's switch acts at once)

private:
    QWidget* localGroup();
    QWidget* remoteGroup();
    void showServerState();
    void listModels();

    LocalServerController* server_;
    RemoteController* remote_;
    QCheckBox* serverSwitch_ = nullptr;
    QSpinBox* port_ = nullptr;
    QLabel* address_ = nullptr;
    QCheckBox* remoteEnabled_ = nullptr;
    QLineEdit* url_ = nullptr;
    QLineEdit* key_ = nullptr;
    bool keyEdited_ = false;
    QComboBox* model_ = nullptr;
    QPushButton* list_ = nullptr;
    QSpinBox* timeout_ = nullptr;
    QLabel* remoteNote_ = nullptr;
};

}  // namespace hearth
